/**
 * A render's `watermark` (drawn under the page's content) and `stamp` (over it), issue 34: the
 * same shape, text or an image, placed on the pages asked. Text is a Jinja2 template executed
 * with the render's variables (the renderer's templating workers, with the document), drawn as
 * real text in the service's own fonts (searchable, any script they cover).
 */

export const MARK_POSITIONS = [
  'center',
  'top-left',
  'top',
  'top-right',
  'left',
  'right',
  'bottom-left',
  'bottom',
  'bottom-right',
] as const;
export type MarkPosition = (typeof MARK_POSITIONS)[number];

/** Characters of a mark's text template, and bytes of its image's data: URI. */
export const MAX_MARK_TEXT_CHARACTERS = 500;
export const MAX_MARK_IMAGE_URI_BYTES = 1024 * 1024;
export const MAX_PAGES_SPEC_CHARACTERS = 200;
export const MARK_IMAGE_TYPES = ['image/png', 'image/jpeg'] as const;

/** `watermark` or `stamp` as the caller gives it. */
export interface RequestedMark {
  readonly text?: string | undefined;
  readonly image?: string | undefined;
  readonly font_size?: number | undefined;
  readonly color?: string | undefined;
  readonly opacity?: number | undefined;
  readonly rotation_deg?: number | undefined;
  readonly position?: MarkPosition | undefined;
  readonly pages?: string | undefined;
}

/** Pages `from` to `to` (1-based, inclusive); `last`: the document's last page. */
export interface PageRange {
  readonly from: number | 'last';
  readonly to: number | 'last';
}

/** A mark as the renderer is given it: defaults applied. */
export interface PdfMark {
  /** A Jinja2 template of plain text; null: an image mark. */
  readonly text: string | null;
  /** A data: URI of a PNG or JPEG; null: a text mark. */
  readonly image: string | null;
  /** Points. */
  readonly fontSize: number;
  /** `#rrggbb`. */
  readonly color: string;
  readonly opacity: number;
  /** Counter-clockwise, as the page is viewed. */
  readonly rotationDeg: number;
  readonly position: MarkPosition;
  /** null: every page. */
  readonly pages: readonly PageRange[] | null;
}

export const MARK_DEFAULTS = {
  watermark: { fontSize: 72, color: '#808080', opacity: 0.3, rotationDeg: 45 },
  stamp: { fontSize: 24, color: '#c00000', opacity: 1, rotationDeg: 0 },
} as const;

const pageNumber = (item: string): number | 'last' | undefined => {
  if (item === 'last') return 'last';
  if (!/^[1-9]\d{0,5}$/.test(item)) return undefined;
  return Number(item);
};

/**
 * `"1-3,last"` as page ranges: comma-separated pages (`2`), ranges (`1-3`, `4-last`) and `last`;
 * undefined when it is not one (a range that runs backwards included).
 */
export const parsePages = (spec: string): PageRange[] | undefined => {
  const ranges: PageRange[] = [];
  for (const raw of spec.split(',')) {
    const item = raw.trim();
    const [first, second, ...rest] = item.split('-').map((s) => s.trim());
    if (rest.length > 0 || first === undefined) return undefined;
    const from = pageNumber(first);
    const to = second === undefined ? from : pageNumber(second);
    if (from === undefined || to === undefined) return undefined;
    if (from === 'last' && to !== 'last') return undefined;
    if (typeof from === 'number' && typeof to === 'number' && to < from) return undefined;
    ranges.push({ from, to });
  }
  return ranges;
};

/** The 1-based pages of a document of `pageCount` pages that `ranges` name, or the first page past its end. */
export const pagesOf = (
  ranges: readonly PageRange[] | null,
  pageCount: number,
): { readonly pages: ReadonlySet<number> } | { readonly beyond: number } => {
  if (ranges === null) return { pages: new Set(Array.from({ length: pageCount }, (_, i) => i + 1)) };
  const pages = new Set<number>();
  for (const { from, to } of ranges) {
    const start = from === 'last' ? pageCount : from;
    const end = to === 'last' ? pageCount : to;
    if (start > pageCount) return { beyond: start };
    if (end > pageCount) return { beyond: end };
    for (let p = start; p <= end; p++) pages.add(p);
  }
  return { pages };
};

export const markOf = (given: RequestedMark, kind: keyof typeof MARK_DEFAULTS): PdfMark => {
  const defaults = MARK_DEFAULTS[kind];
  return {
    text: given.text ?? null,
    image: given.image ?? null,
    fontSize: given.font_size ?? defaults.fontSize,
    color: (given.color ?? defaults.color).toLowerCase(),
    opacity: given.opacity ?? defaults.opacity,
    rotationDeg: given.rotation_deg ?? defaults.rotationDeg,
    position: given.position ?? 'center',
    pages: given.pages === undefined ? null : (parsePages(given.pages) ?? null),
  };
};
