/**
 * PDFs merged into one (a merge's parts, functions/domain/merges/): every page of each part in
 * order, the parts' links kept working, and an outline with one top entry per part (its title)
 * and the part's own bookmarks beneath.
 *
 * The library is pdf-lib 1.17.1 (MIT, pure JS). Measured against @cantoo/pdf-lib 2.11.1 (its
 * maintained fork) and @neslinesli93/qpdf-wasm 0.3.0 (qpdf 11 in WebAssembly) on 200 copies of a
 * 2-page tagged Chromium print with an outline, an internal and an external link (2 busy cores):
 *   pdf-lib       1.7-1.8 s, 3.04 MB out, 141 MiB RSS; bundle 512 KB minified (195 KB gzip)
 *   @cantoo       2.5-3.9 s, 3.15 MB out, 140 MiB RSS; bundle 608 KB minified (256 KB gzip)
 *   qpdf-wasm     0.9 s,     3.71 MB out, 134 MiB RSS; 43 KB of JS + a 1.33 MB wasm (444 KB gzip)
 * All three keep the 400 pages, the 200 external links and the link annotations, and all three
 * drop the same things: the outline, the named destinations the internal links point to (every
 * internal link dead), and the structure tree (the result is untagged). Those are put back here
 * on pdf-lib's object model (qpdf's would be its JSON round trip), which is why it won over the
 * faster qpdf. The structure tree is put back too when every part is tagged (merge-structure.ts).
 *
 * Named destinations are renamed per part (`p3.section-2`), as two parts may both have a `#total`.
 */
import {
  PDFArray,
  PDFDict,
  PDFDocument,
  PDFHexString,
  PDFName,
  type PDFObject,
  type PDFPage,
  PDFRef,
  PDFString,
} from 'pdf-lib';
import { createStructureMerge } from './merge-structure.js';

export interface MergePart {
  readonly pdf: Uint8Array;
  /** Its top outline entry; null: its own document title, else "Part N". */
  readonly title: string | null;
}

export interface MergeOptions {
  /** One top outline entry per part, the part's own bookmarks beneath. */
  readonly outline: boolean;
  readonly metadata?: {
    readonly title?: string;
    readonly author?: string;
    readonly subject?: string;
    readonly keywords?: readonly string[];
  };
  /** The document's creation date. */
  readonly now: Date;
}

export interface Merged {
  readonly pdf: Uint8Array;
  readonly pageCount: number;
  /** Each part's first page (1-based) in the merged document. */
  readonly firstPages: readonly number[];
  /** Whether it is tagged: every part was, and their structure trees are merged. */
  readonly tagged: boolean;
}

interface OutlineItem {
  readonly title: string;
  /** A destination array in the merged document. */
  readonly dest: PDFArray | undefined;
  readonly children: OutlineItem[];
}

const textOf = (value: PDFObject | undefined): string | undefined =>
  value instanceof PDFString || value instanceof PDFHexString ? value.decodeText() : undefined;

const nameOf = (value: PDFObject | undefined): string | undefined => {
  if (value instanceof PDFName) return value.decodeText();
  return textOf(value);
};

/** A part's named destinations (the catalog's /Dests, and a /Names /Dests tree's leaves), by name. */
const namedDestinations = (doc: PDFDocument): Map<string, PDFArray> => {
  const found = new Map<string, PDFArray>();
  const asArray = (value: PDFObject | undefined): PDFArray | undefined => {
    const v = value instanceof PDFRef ? doc.context.lookup(value) : value;
    if (v instanceof PDFArray) return v;
    if (v instanceof PDFDict) {
      const d = v.lookup(PDFName.of('D'));
      return d instanceof PDFArray ? d : undefined;
    }
    return undefined;
  };
  const dests = doc.catalog.lookup(PDFName.of('Dests'));
  if (dests instanceof PDFDict) {
    for (const [key, value] of dests.entries()) {
      const array = asArray(value);
      if (array) found.set(key.decodeText(), array);
    }
  }
  const walk = (node: PDFObject | undefined, depth: number): void => {
    if (!(node instanceof PDFDict) || depth > 32) return;
    const names = node.lookup(PDFName.of('Names'));
    if (names instanceof PDFArray) {
      for (let i = 0; i + 1 < names.size(); i += 2) {
        const key = textOf(names.lookup(i));
        const array = asArray(names.get(i + 1));
        if (key !== undefined && array) found.set(key, array);
      }
    }
    const kids = node.lookup(PDFName.of('Kids'));
    if (kids instanceof PDFArray) for (let i = 0; i < kids.size(); i++) walk(kids.lookup(i), depth + 1);
  };
  const names = doc.catalog.lookup(PDFName.of('Names'));
  if (names instanceof PDFDict) walk(names.lookup(PDFName.of('Dests')), 0);
  return found;
};

export const mergePdfs = async (parts: readonly MergePart[], options: MergeOptions): Promise<Merged> => {
  const out = await PDFDocument.create({ updateMetadata: false });
  const destinations = out.context.obj({});
  const outline: OutlineItem[] = [];
  const firstPages: number[] = [];
  const structure = createStructureMerge(out);

  for (const [index, part] of parts.entries()) {
    const source = await PDFDocument.load(part.pdf, { updateMetadata: false });
    const sourcePages = source.getPages();
    const copied = await out.copyPages(source, source.getPageIndices());
    firstPages.push(out.getPageCount() + 1);
    for (const page of copied) out.addPage(page);
    structure.add(source, sourcePages, copied);

    // A destination array of the part, pointing at the merged document's copy of its page.
    const pageOf = new Map<string, PDFPage>(
      sourcePages.map((page, i) => [page.ref.toString(), copied[i] as PDFPage]),
    );
    const moved = (array: PDFArray | undefined): PDFArray | undefined => {
      const target = array?.get(0);
      const page = target instanceof PDFRef ? pageOf.get(target.toString()) : undefined;
      if (!array || !page) return undefined;
      const rest = array.asArray().slice(1);
      return out.context.obj([page.ref, ...rest]) as PDFArray;
    };
    const renamed = (name: string) => `p${index + 1}.${name}`;

    const named = namedDestinations(source);
    for (const [name, array] of named) {
      const target = moved(array);
      if (target) destinations.set(PDFName.of(renamed(name)), target);
    }
    // The copied pages' links to a named destination now name the part's renamed one.
    for (const page of copied) {
      const annots = page.node.lookup(PDFName.of('Annots'));
      if (!(annots instanceof PDFArray)) continue;
      for (let i = 0; i < annots.size(); i++) {
        const annot = annots.lookup(i);
        if (!(annot instanceof PDFDict)) continue;
        const dest = nameOf(annot.get(PDFName.of('Dest')));
        if (dest !== undefined) annot.set(PDFName.of('Dest'), PDFName.of(renamed(dest)));
        const action = annot.lookup(PDFName.of('A'));
        if (action instanceof PDFDict && action.lookup(PDFName.of('S')) === PDFName.of('GoTo')) {
          const d = nameOf(action.get(PDFName.of('D')));
          if (d !== undefined) action.set(PDFName.of('D'), PDFName.of(renamed(d)));
        }
      }
    }

    if (!options.outline) continue;
    const destOf = (item: PDFDict): PDFArray | undefined => {
      const direct = item.lookup(PDFName.of('Dest'));
      const action = item.lookup(PDFName.of('A'));
      const d = direct ?? (action instanceof PDFDict ? action.lookup(PDFName.of('D')) : undefined);
      if (d instanceof PDFArray) return moved(d);
      const name = nameOf(d);
      return name === undefined ? undefined : moved(named.get(name));
    };
    const itemsOf = (first: PDFObject | undefined, depth: number): OutlineItem[] => {
      const items: OutlineItem[] = [];
      const seen = new Set<PDFObject>();
      for (let item = first; item instanceof PDFDict && !seen.has(item) && depth < 32; ) {
        seen.add(item);
        items.push({
          title: textOf(item.lookup(PDFName.of('Title'))) ?? '',
          dest: destOf(item),
          children: itemsOf(item.lookup(PDFName.of('First')), depth + 1),
        });
        item = item.lookup(PDFName.of('Next'));
      }
      return items;
    };
    const own = source.catalog.lookup(PDFName.of('Outlines'));
    const firstPage = copied[0];
    const ownTitle = source.getTitle()?.trim();
    outline.push({
      title: part.title ?? (ownTitle && ownTitle !== 'about:blank' ? ownTitle : `Part ${index + 1}`),
      dest: firstPage ? (out.context.obj([firstPage.ref, PDFName.of('Fit')]) as PDFArray) : undefined,
      children: own instanceof PDFDict ? itemsOf(own.lookup(PDFName.of('First')), 0) : [],
    });
  }

  const tagged = structure.finish();
  if (destinations.entries().length > 0)
    out.catalog.set(PDFName.of('Dests'), out.context.register(destinations));
  if (options.outline && outline.length > 0) writeOutline(out, outline);

  const { metadata } = options;
  if (metadata?.title !== undefined) out.setTitle(metadata.title);
  if (metadata?.author !== undefined) out.setAuthor(metadata.author);
  if (metadata?.subject !== undefined) out.setSubject(metadata.subject);
  if (metadata?.keywords !== undefined) out.setKeywords([...metadata.keywords]);
  out.setCreationDate(options.now);
  out.setModificationDate(options.now);

  return { pdf: await out.save(), pageCount: out.getPageCount(), firstPages, tagged };
};

/** The outline tree (PDF 1.7, 12.3.3): items linked by /Parent, /Prev, /Next, /First, /Last, /Count. */
const writeOutline = (doc: PDFDocument, items: readonly OutlineItem[]): void => {
  const { context } = doc;
  const rootRef = context.nextRef();
  const write = (
    level: readonly OutlineItem[],
    parent: PDFRef,
  ): { first: PDFRef; last: PDFRef; count: number } => {
    const refs = level.map(() => context.nextRef());
    let count = 0;
    level.forEach((item, i) => {
      const ref = refs[i] as PDFRef;
      const dict = context.obj({ Title: PDFHexString.fromText(item.title), Parent: parent }) as PDFDict;
      if (item.dest) dict.set(PDFName.of('Dest'), item.dest);
      if (i > 0) dict.set(PDFName.of('Prev'), refs[i - 1] as PDFRef);
      if (i < refs.length - 1) dict.set(PDFName.of('Next'), refs[i + 1] as PDFRef);
      count += 1;
      if (item.children.length > 0) {
        const kids = write(item.children, ref);
        dict.set(PDFName.of('First'), kids.first);
        dict.set(PDFName.of('Last'), kids.last);
        // Open: the part's own bookmarks are shown beneath it.
        dict.set(PDFName.of('Count'), context.obj(kids.count));
        count += kids.count;
      }
      context.assign(ref, dict);
    });
    return { first: refs[0] as PDFRef, last: refs[refs.length - 1] as PDFRef, count };
  };
  const top = write(items, rootRef);
  context.assign(
    rootRef,
    context.obj({ Type: 'Outlines', First: top.first, Last: top.last, Count: top.count }),
  );
  doc.catalog.set(PDFName.of('Outlines'), rootRef);
  doc.catalog.set(PDFName.of('PageMode'), PDFName.of('UseOutlines'));
};
