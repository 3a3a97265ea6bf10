/**
 * A render's options, declared once: as the caller gives them (RequestedOptions, which the edges
 * check is their request schema's output, field for field: functions/pdf/request.ts), the checks
 * a schema cannot make (margins against the paper, room for a header or footer), and the
 * normalised options the renderer is given (RenderOptions, part of ports.ts's RenderRequest).
 * A new option is written in three files: the request schema (functions/pdf/options.ts, or
 * request.ts for page_load and metadata), this one (as given, as normalised, and the one made
 * into the other), and the renderer's file that acts on it; the compiler names any it misses.
 */
import { ServiceError } from '../common/errors.js';
import type { EInvoiceOption, RequestedEInvoice, SavedEInvoice } from './e-invoice.js';
import { checkFinishingConflicts, type FinishingStepName } from './finishing.js';
import { markOf, type PdfMark, type RequestedMark } from './marks.js';
import { type PdfProtection, protectionOf, type RequestedProtection } from './protection.js';
import { type PdfSignature, type RequestedSignature, signatureOf } from './signature.js';

export type PaperFormat = 'A4' | 'A3' | 'A5' | 'LETTER' | 'LEGAL';
export type WaitUntil = 'load' | 'domcontentloaded' | 'networkidle0' | 'networkidle2';
/** PDF/A-2b or PDF/A-3b (ISO 19005-2/-3, level B). */
export type PdfALevel = '2b' | '3b';

/** Paper sizes in inches, portrait (width, height), as Chromium prints them. */
export const PAPER_INCHES: Readonly<Record<PaperFormat, readonly [number, number]>> = {
  A3: [11.7, 16.54],
  A4: [8.27, 11.7],
  A5: [5.83, 8.27],
  LETTER: [8.5, 11],
  LEGAL: [8.5, 14],
};

export const DEFAULT_MARGIN_INCHES = 0.4;
/**
 * Chromium prints a header inside the top margin and a footer inside the bottom one, and clips
 * what does not fit: below this (about one line of 10 px text) a header or footer cannot show,
 * so such margins are refused rather than printed blank. The default margin holds two lines.
 */
export const MIN_HEADER_FOOTER_MARGIN_INCHES = 0.2;
export const DEFAULT_TIMEOUT_MS = 30_000;
/**
 * The most a sync render's page_load.timeout_ms may ask for (its answer is waited for; it is
 * clamped to the sync budget). An async render's may go up to the async budget (issue 37).
 */
export const SYNC_MAX_TIMEOUT_MS = 120_000;

/** The options as the caller gave them (absent: the default). */
export interface RequestedOptions {
  readonly format?: PaperFormat | undefined;
  readonly landscape?: boolean | undefined;
  readonly print_background?: boolean | undefined;
  readonly margins?:
    | {
        readonly top?: number | undefined;
        readonly right?: number | undefined;
        readonly bottom?: number | undefined;
        readonly left?: number | undefined;
      }
    | undefined;
  /** Page references in the body, filled by a second print (renderer/navigation/print.ts). */
  readonly paged_media?: boolean | undefined;
  /** PDF bookmarks from the printed headings. */
  readonly outline?: boolean | undefined;
  /** A tagged PDF; absent: the deployment's PDF_TAGGED. */
  readonly tagged?: boolean | undefined;
  /** An archivable PDF/A (a finishing step: finishing.ts). */
  readonly pdf_a?: PdfALevel | undefined;
  readonly page_load?:
    | {
        readonly wait_until?: WaitUntil | undefined;
        readonly timeout_ms?: number | undefined;
        readonly wait_for_selector?: string | null | undefined;
      }
    | undefined;
  readonly metadata?:
    | {
        readonly title?: string | undefined;
        readonly author?: string | undefined;
        readonly subject?: string | undefined;
        readonly keywords?: readonly string[] | undefined;
      }
    | undefined;
  /** AES-256 passwords and permissions (protection.ts); never kept with a saved template. */
  readonly protection?: RequestedProtection | undefined;
  /** Text or an image under the content (marks.ts). */
  readonly watermark?: RequestedMark | undefined;
  /** Text or an image over the content (marks.ts). */
  readonly stamp?: RequestedMark | undefined;
  /** A Factur-X / ZUGFeRD e-invoice embedded in the PDF (e-invoice.ts). */
  readonly e_invoice?: RequestedEInvoice | undefined;
  /** A PAdES B-B signature with one of the account's signing keys (signature.ts). */
  readonly signature?: RequestedSignature | undefined;
}

/** Where a document's pages fall in a longer one whose page numbers it prints. */
export interface PageNumbering {
  /** The number its first page prints (1-based). */
  readonly first: number;
  /** Its own pages, as its first print counted them. */
  readonly pages: number;
  /** The whole document's pages: what `totalPages` and `counter(pages)` print. */
  readonly total: number;
}

/** Fields of the PDF's document information dictionary (the request's `metadata`). */
export interface PdfMetadata {
  readonly title?: string;
  readonly author?: string;
  readonly subject?: string;
  readonly keywords?: readonly string[];
}

/** The options the renderer is given: every default applied, every check passed. */
export interface RenderOptions {
  readonly pdf: {
    readonly format: PaperFormat;
    readonly landscape: boolean;
    readonly printBackground: boolean;
    /** Inches. */
    readonly margins: {
      readonly top: number;
      readonly right: number;
      readonly bottom: number;
      readonly left: number;
    };
    /** counter(page), counter(pages) and target-counter() in the document's own CSS. Absent: off. */
    readonly pagedMedia?: boolean;
    /** PDF bookmarks from the document's printed headings h1-h6. Absent: off. */
    readonly outline?: boolean;
    /** A tagged (accessible) PDF. Absent: the renderer's configured default (PDF_TAGGED). */
    readonly tagged?: boolean;
    /**
     * The document printed as pages `first`..`first + pages - 1` of a document of `total` pages
     * (a merge's part, laid out again with its place in the whole: functions/domain/merges/).
     * Absent: its own pages, numbered from 1.
     */
    readonly pageNumbering?: PageNumbering;
  };
  readonly pageLoad: {
    readonly waitUntil: WaitUntil;
    /**
     * Already clamped to the render budget. Counts from the render's start: opening the page,
     * loading, waiting and printing (not templating before it, nor the upload after).
     */
    readonly timeoutMs: number;
    readonly waitForSelector: string | null;
  };
  /** The PDF's document information: what is given here replaces what Chromium writes. */
  readonly metadata?: PdfMetadata;
  /** Encrypt the finished PDF (protection.ts). */
  readonly protection?: PdfProtection;
  readonly watermark?: PdfMark;
  readonly stamp?: PdfMark;
  /**
   * A preview's own mark (previews.ts), drawn over the stamp on every page: set by the preview
   * route only, never by a request (no schema has it).
   */
  readonly preview_mark?: PdfMark;
  /** A PDF/A of this level (a finishing step). Absent: the PDF as printed. */
  readonly pdf_a?: PdfALevel;
  /** An e-invoice embedded in a PDF/A-3b (a finishing step); its XML validated at acceptance. */
  readonly e_invoice?: EInvoiceOption;
  /** Sign the finished PDF (PAdES B-B) with the account's key named (a finishing step). */
  readonly signature?: PdfSignature;
}

/**
 * What a saved template keeps of a render's options (its `pdf_options`): the page and navigation,
 * everything but how the page loads and the document information.
 */
export interface TemplatePdfOptions
  extends Omit<RequestedOptions, 'page_load' | 'metadata' | 'protection' | 'e_invoice'> {
  /** The template's variables are an e-invoice's document (a render's own e_invoice replaces it). */
  readonly e_invoice?: SavedEInvoice | undefined;
}

const definedOnly = <T extends object>(value: T): Partial<T> =>
  Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;

/**
 * A render of a saved template: the template's options are the defaults, what the render gives
 * itself wins, field by field (and margin by margin: a render's `margins.top` keeps the template's
 * other sides).
 */
export const withTemplateDefaults = (
  saved: TemplatePdfOptions | null | undefined,
  requested: RequestedOptions,
): RequestedOptions => {
  if (!saved) return requested;
  const margins =
    saved.margins || requested.margins
      ? { ...definedOnly(saved.margins ?? {}), ...definedOnly(requested.margins ?? {}) }
      : undefined;
  return { ...definedOnly(saved), ...definedOnly(requested), ...(margins ? { margins } : {}) };
};

/**
 * A header or footer prints inside its margin: one that leaves no room for it is refused (a saved
 * template's header is known only once it is read, so this runs after the lookup).
 */
export const checkHeaderFooterMargins = (
  options: RenderOptions,
  parts: { readonly header: boolean; readonly footer: boolean },
): void => {
  const { margins } = options.pdf;
  for (const [part, side] of [
    ['header', 'top'],
    ['footer', 'bottom'],
  ] as const) {
    if (!parts[part] || margins[side] >= MIN_HEADER_FOOTER_MARGIN_INCHES) continue;
    const issue = `must be at least ${MIN_HEADER_FOOTER_MARGIN_INCHES} inches to leave room for the ${part} (it prints inside the ${side} margin)`;
    throw new ServiceError('INVALID_PDF_OPTIONS', `margins.${side} ${issue}`, {
      details: [{ field: `margins.${side}`, issue }],
    });
  }
};

const metadataOf = (metadata: RequestedOptions['metadata']): PdfMetadata | undefined => {
  if (!metadata) return undefined;
  const { title, author, subject, keywords } = metadata;
  return {
    ...(title !== undefined ? { title } : {}),
    ...(author !== undefined ? { author } : {}),
    ...(subject !== undefined ? { subject } : {}),
    ...(keywords !== undefined && keywords.length > 0 ? { keywords } : {}),
  };
};

/** An e-invoice is a PDF/A-3: with pdf_a, it must be 3b. */
const eInvoiceOf = (given: RequestedEInvoice, pdfA: PdfALevel | undefined): EInvoiceOption => {
  if (pdfA !== undefined && pdfA !== '3b') {
    const issue = 'an e-invoice is embedded in a PDF/A-3b: give pdf_a "3b" or leave it out';
    throw new ServiceError('INVALID_PDF_OPTIONS', `pdf_a ${issue}`, {
      details: [
        { field: 'pdf_a', issue },
        { field: 'e_invoice', issue: 'cannot be given with pdf_a "2b"' },
      ],
    });
  }
  const { standard, profile, xml, invoice, invoice_from_variables } = given;
  return {
    standard,
    profile,
    ...(xml !== undefined ? { xml } : {}),
    ...(invoice !== undefined ? { invoice } : {}),
    ...(invoice_from_variables === true ? { fromVariables: true as const } : {}),
  };
};

/** Defaults applied, margins checked against the paper, timeout clamped to the render budget. */
/**
 * page_load.timeout_ms checked against the most its mode may wait (`maxTimeoutMs`: the sync cap,
 * or the async budget): above it is refused, not clamped, so that an async render never waits
 * less than it asked for without saying so.
 */
const timeoutOf = (given: number | undefined, maxTimeoutMs: number): number => {
  if (given === undefined) return DEFAULT_TIMEOUT_MS;
  if (given > maxTimeoutMs) {
    const issue =
      maxTimeoutMs === SYNC_MAX_TIMEOUT_MS
        ? `must be at most ${SYNC_MAX_TIMEOUT_MS} for a sync render; render it async (async: true) to wait longer`
        : `must be at most ${maxTimeoutMs}, this deployment's async render budget`;
    throw new ServiceError('INVALID_PAGE_LOAD_OPTIONS', `page_load.timeout_ms ${issue}`, {
      details: [{ field: 'page_load.timeout_ms', issue }],
    });
  }
  return given;
};

export const renderOptionsFrom = (
  requested: RequestedOptions,
  renderBudgetMs: number,
  maxTimeoutMs: number = SYNC_MAX_TIMEOUT_MS,
): RenderOptions => {
  // Every field by name and none left over: a field RequestedOptions gains fails to compile here
  // until it is made into the renderer's options.
  const {
    format: givenFormat,
    landscape: givenLandscape,
    print_background,
    margins: givenMargins,
    paged_media,
    outline,
    tagged,
    page_load,
    metadata,
    protection,
    watermark,
    stamp,
    pdf_a,
    e_invoice,
    signature,
    ...untranslated
  } = requested;
  const _untranslated: Record<string, never> = untranslated;
  const format = givenFormat ?? 'A4';
  const landscape = givenLandscape ?? false;
  const margins = {
    top: givenMargins?.top ?? DEFAULT_MARGIN_INCHES,
    right: givenMargins?.right ?? DEFAULT_MARGIN_INCHES,
    bottom: givenMargins?.bottom ?? DEFAULT_MARGIN_INCHES,
    left: givenMargins?.left ?? DEFAULT_MARGIN_INCHES,
  };
  const [portraitWidth, portraitHeight] = PAPER_INCHES[format];
  const [width, height] = landscape ? [portraitHeight, portraitWidth] : [portraitWidth, portraitHeight];
  if (margins.left + margins.right >= width || margins.top + margins.bottom >= height) {
    const message = `margins leave no printable area on ${format}${landscape ? ' landscape' : ''} paper (${width} x ${height} in)`;
    throw new ServiceError('INVALID_PDF_OPTIONS', message, {
      details: [{ field: 'margins', issue: message }],
    });
  }
  const options: RenderOptions = {
    pdf: {
      format,
      landscape,
      printBackground: print_background ?? true,
      margins,
      // Only when given: an absent `tagged` is the renderer's own default (PDF_TAGGED).
      ...(paged_media !== undefined ? { pagedMedia: paged_media } : {}),
      ...(outline !== undefined ? { outline } : {}),
      ...(tagged !== undefined ? { tagged } : {}),
    },
    pageLoad: {
      waitUntil: page_load?.wait_until ?? 'load',
      timeoutMs: Math.min(timeoutOf(page_load?.timeout_ms, maxTimeoutMs), renderBudgetMs),
      waitForSelector: page_load?.wait_for_selector ?? null,
    },
    ...(metadata ? { metadata: metadataOf(metadata) } : {}),
    ...(protection ? { protection: protectionOf(protection) } : {}),
    ...(watermark ? { watermark: markOf(watermark, 'watermark') } : {}),
    ...(stamp ? { stamp: markOf(stamp, 'stamp') } : {}),
    ...(pdf_a !== undefined ? { pdf_a } : {}),
    ...(e_invoice ? { e_invoice: eInvoiceOf(e_invoice, pdf_a) } : {}),
    ...(signature ? { signature: signatureOf(signature) } : {}),
  };
  checkFinishingConflicts(options);
  return options;
};

/** Every finishing step (finishing.ts) is asked for by a render option of its name. */
export const stepsAreOptions: FinishingStepName extends keyof RenderOptions ? true : never = true;
