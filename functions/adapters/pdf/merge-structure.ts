/**
 * A merged PDF's structure tree (a tagged PDF's logical structure, PDF 1.7 14.7), made of its
 * parts' trees: pdf-lib's copyPages copies pages but not the catalog's StructTreeRoot, so a merge
 * of tagged parts came out untagged (measured on the tagged Chromium fixture, links.pdf: `pdfinfo`
 * said `Tagged: no` and `pdfinfo -struct` printed nothing). Each part's top elements go beneath one
 * new Document element (each part's own Document becomes a Part), copied with a copier that already knows the part's pages and annotations (their
 * copies in the merged document), so each element's /Pg and each /OBJR point at the merged pages
 * and links, not at new copies; each part's parent tree keys (its pages' /StructParents and its
 * annotations' /StructParent) are moved past the parts before it.
 *
 * The merge is tagged only when every part is: a tagged document whose pages of an untagged part
 * are outside its structure would hide that part's text from assistive technology, which reads an
 * untagged document in content order instead. Such a merge is untagged, as before.
 */
import {
  PDFArray,
  PDFBool,
  PDFDict,
  type PDFDocument,
  PDFName,
  PDFNumber,
  type PDFObject,
  PDFObjectCopier,
  type PDFPage,
  PDFRef,
} from 'pdf-lib';

const N = (name: string) => PDFName.of(name);

/** Whether a document is tagged: a structure tree root, and MarkInfo's Marked true. */
export const isTagged = (doc: PDFDocument): boolean => {
  const markInfo = doc.catalog.lookup(N('MarkInfo'));
  const marked = markInfo instanceof PDFDict ? markInfo.lookup(N('Marked')) : undefined;
  return marked === PDFBool.True && doc.catalog.get(N('StructTreeRoot')) instanceof PDFRef;
};

/** A number tree's entries (its Nums, through its Kids), in order. */
const numberTreeEntries = (node: PDFObject | undefined, depth = 0): [number, PDFObject][] => {
  if (!(node instanceof PDFDict) || depth > 32) return [];
  const out: [number, PDFObject][] = [];
  const nums = node.lookup(N('Nums'));
  if (nums instanceof PDFArray) {
    for (let i = 0; i + 1 < nums.size(); i += 2) {
      const key = nums.lookup(i);
      const value = nums.get(i + 1);
      if (key instanceof PDFNumber && value !== undefined) out.push([key.asNumber(), value]);
    }
  }
  const kids = node.lookup(N('Kids'));
  if (kids instanceof PDFArray) {
    for (let i = 0; i < kids.size(); i++) out.push(...numberTreeEntries(kids.lookup(i), depth + 1));
  }
  return out;
};

const annotRefs = (page: PDFPage): PDFRef[] => {
  const annots = page.node.lookup(N('Annots'));
  if (!(annots instanceof PDFArray)) return [];
  return annots.asArray().filter((a): a is PDFRef => a instanceof PDFRef);
};

export const createStructureMerge = (out: PDFDocument) => {
  const rootRef = out.context.nextRef();
  /** The one Document element beneath the root (PDF/UA wants one; poppler warns of several). */
  const documentRef = out.context.nextRef();
  const kids: PDFObject[] = [];
  const nums: PDFObject[] = [];
  const roleMap = out.context.obj({}) as PDFDict;
  /** Every object the parts' trees were copied into: deleted if the merge ends untagged. */
  const copied: PDFRef[] = [];
  let nextKey = 0;
  let tagged = true;
  let lang: PDFObject | undefined;

  return {
    /** A part's tree, after its pages were copied (`copiedPages`, in the order of `sourcePages`). */
    add(source: PDFDocument, sourcePages: readonly PDFPage[], copiedPages: readonly PDFPage[]): void {
      if (!tagged) return;
      if (!isTagged(source)) {
        tagged = false;
        return;
      }
      const sourceRoot = source.catalog.get(N('StructTreeRoot')) as PDFRef;
      const root = source.context.lookup(sourceRoot);
      if (!(root instanceof PDFDict)) {
        tagged = false;
        return;
      }
      lang ??= source.catalog.get(N('Lang'));
      const copier = PDFObjectCopier.for(source.context, out.context);
      // The copier's map of what it copied: the part's pages, links and root are copied already.
      const known = (copier as unknown as { traversedObjects: Map<PDFObject, PDFObject> }).traversedObjects;
      const seeded = new Set<PDFObject>();
      const seed = (from: PDFObject, to: PDFObject) => {
        known.set(from, to);
        seeded.add(from);
      };
      seed(sourceRoot, documentRef);
      const offset = nextKey;
      sourcePages.forEach((page, i) => {
        const copy = copiedPages[i];
        if (!copy) return;
        seed(page.ref, copy.ref);
        const fromAnnots = annotRefs(page);
        const toAnnots = annotRefs(copy);
        fromAnnots.forEach((ref, j) => {
          const to = toAnnots[j];
          if (to) seed(ref, to);
        });
        const parents = copy.node.lookup(N('StructParents'));
        if (parents instanceof PDFNumber)
          copy.node.set(N('StructParents'), PDFNumber.of(parents.asNumber() + offset));
        for (const ref of toAnnots) {
          const annot = out.context.lookup(ref);
          const parent = annot instanceof PDFDict ? annot.lookup(N('StructParent')) : undefined;
          if (annot instanceof PDFDict && parent instanceof PDFNumber)
            annot.set(N('StructParent'), PDFNumber.of(parent.asNumber() + offset));
        }
      });
      const k = root.get(N('K'));
      const topKids = k instanceof PDFArray ? k.asArray() : k ? [k] : [];
      for (const kid of topKids) {
        const copy = copier.copy(kid);
        const element = copy instanceof PDFRef ? out.context.lookup(copy) : copy;
        // Each part's own Document is a Part of the merged one.
        if (element instanceof PDFDict && element.lookup(N('S')) === N('Document'))
          element.set(N('S'), N('Part'));
        kids.push(copy);
      }
      let last = offset - 1;
      for (const [key, value] of numberTreeEntries(root.lookup(N('ParentTree')))) {
        nums.push(PDFNumber.of(key + offset), copier.copy(value));
        last = Math.max(last, key + offset);
      }
      const declaredNext = root.lookup(N('ParentTreeNextKey'));
      nextKey = Math.max(last + 1, declaredNext instanceof PDFNumber ? offset + declaredNext.asNumber() : 0);
      const roles = root.lookup(N('RoleMap'));
      if (roles instanceof PDFDict) for (const [name, value] of roles.entries()) roleMap.set(name, value);
      for (const [from, to] of known) if (!seeded.has(from) && to instanceof PDFRef) copied.push(to);
    },

    /** The merged tree under the catalog when every part was tagged; else what was copied is removed. */
    finish(): boolean {
      if (!tagged || kids.length === 0) {
        for (const ref of copied) out.context.delete(ref);
        out.context.delete(documentRef);
        return false;
      }
      const { context } = out;
      context.assign(documentRef, context.obj({ Type: 'StructElem', S: 'Document', P: rootRef, K: kids }));
      const root = context.obj({
        Type: 'StructTreeRoot',
        K: documentRef,
        ParentTree: context.obj({ Nums: nums }),
        ParentTreeNextKey: nextKey,
      }) as PDFDict;
      if (roleMap.entries().length > 0) root.set(N('RoleMap'), roleMap);
      context.assign(rootRef, root);
      out.catalog.set(N('StructTreeRoot'), rootRef);
      out.catalog.set(N('MarkInfo'), context.obj({ Marked: true }));
      if (lang) out.catalog.set(N('Lang'), lang);
      return true;
    },
  };
};
