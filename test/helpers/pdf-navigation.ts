/**
 * Reading what makes a PDF navigable, with pdfjs-dist as a viewer does: its outline (with the page
 * each item opens), its structure tree (roles, alternative text, language), and what the catalog
 * tells the viewer (page mode, DisplayDocTitle).
 */
import { getDocument, type PDFDocumentProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';

export interface OutlineEntry {
  readonly title: string;
  /** 1-based. */
  readonly page: number;
  readonly children: readonly OutlineEntry[];
}

export interface StructNode {
  readonly role: string;
  readonly alt?: string;
  readonly lang?: string;
  readonly children: readonly (StructNode | { readonly type: string })[];
}

export interface PdfNavigation {
  readonly outline: readonly OutlineEntry[];
  /** Page mode, as pdf.js names it (UseOutlines, UseNone, …). */
  readonly pageMode: string;
  readonly displayDocTitle: boolean;
  readonly language: string | undefined;
  /** The document information's title and author. */
  readonly title: string | undefined;
  readonly author: string | undefined;
  readonly marked: boolean;
  /** Each page's structure tree (null: the page has none). */
  readonly structTrees: readonly (StructNode | null)[];
}

const open = (bytes: Uint8Array): Promise<PDFDocumentProxy> =>
  getDocument({ data: new Uint8Array(bytes).slice(), verbosity: 0, isEvalSupported: false }).promise;

type PdfOutline = Awaited<ReturnType<PDFDocumentProxy['getOutline']>>;

const readOutline = async (doc: PDFDocumentProxy, items: PdfOutline): Promise<OutlineEntry[]> =>
  Promise.all(
    (items ?? []).map(async (item) => {
      const dest = typeof item.dest === 'string' ? await doc.getDestination(item.dest) : item.dest;
      const ref = dest?.[0];
      const page = ref && typeof ref === 'object' ? (await doc.getPageIndex(ref)) + 1 : 0;
      return { title: item.title, page, children: await readOutline(doc, item.items) };
    }),
  );

export const readNavigation = async (bytes: Uint8Array): Promise<PdfNavigation> => {
  const doc = await open(bytes);
  try {
    const [outline, pageMode, preferences, metadata, markInfo] = await Promise.all([
      doc.getOutline(),
      doc.getPageMode(),
      doc.getViewerPreferences() as Promise<Record<string, unknown> | null>,
      doc.getMetadata(),
      doc.getMarkInfo(),
    ]);
    const structTrees: (StructNode | null)[] = [];
    for (let n = 1; n <= doc.numPages; n++) {
      structTrees.push(((await (await doc.getPage(n)).getStructTree()) as StructNode | null) ?? null);
    }
    return {
      outline: await readOutline(doc, outline),
      pageMode,
      displayDocTitle: preferences?.DisplayDocTitle === true,
      language: (metadata.info as { Language?: string }).Language,
      title: (metadata.info as { Title?: string }).Title,
      author: (metadata.info as { Author?: string }).Author,
      marked: markInfo?.Marked === true,
      structTrees,
    };
  } finally {
    await doc.destroy();
  }
};

/** Every node of the structure trees, depth first. */
export const structNodes = (trees: readonly (StructNode | null)[]): StructNode[] => {
  const nodes: StructNode[] = [];
  const visit = (node: StructNode | { readonly type: string }): void => {
    if (!('role' in node)) return;
    nodes.push(node);
    for (const child of node.children ?? []) visit(child);
  };
  for (const tree of trees) if (tree) visit(tree);
  return nodes;
};

/** Outline entries, depth first, with their depth (0: top level). */
export const flattenOutline = (
  entries: readonly OutlineEntry[],
  depth = 0,
): { title: string; page: number; depth: number }[] =>
  entries.flatMap((e) => [{ title: e.title, page: e.page, depth }, ...flattenOutline(e.children, depth + 1)]);
