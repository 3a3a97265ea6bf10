/**
 * The renderer's interface. In the cloud the renderer is its own Lambda with the Chromium layer
 * and no AWS permissions: it is handed a template with its variables (the API has parsed it, the
 * renderer executes it: see templating-pool.ts) and a presigned PUT URL, and answers with a
 * result. Locally the same function is called in-process. Nothing here imports AWS or Chromium.
 */

export type PaperFormat = 'A4' | 'A3' | 'A5' | 'LETTER' | 'LEGAL';
export type WaitUntil = 'load' | 'domcontentloaded' | 'networkidle0' | 'networkidle2';

export interface RenderRequest {
  /** The Jinja2 template and its variables; the renderer executes it, the HTML never leaves it. */
  readonly template: { readonly source: string; readonly variables: Record<string, unknown> };
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
  };
  readonly pageLoad: {
    readonly waitUntil: WaitUntil;
    /** Already clamped to the render budget. Covers loading, waiting and printing. */
    readonly timeoutMs: number;
    readonly waitForSelector: string | null;
  };
  /** Where to put the PDF: a presigned S3 PUT. The renderer sends exactly these headers. */
  readonly upload: { readonly url: string; readonly headers: Readonly<Record<string, string>> };
  readonly limits: {
    readonly maxPdfBytes: number;
    readonly maxPages: number;
    /** UTF-8 bytes of HTML after templating. */
    readonly maxHtmlBytes: number;
  };
}

export type RenderFailureCode =
  | 'INVALID_HTML_TEMPLATE'
  | 'HTML_CONTENT_TOO_LARGE'
  | 'PDF_RENDERING_TIMEOUT'
  | 'PDF_RENDERING_FAILED'
  | 'PDF_STORAGE_FAILED'
  | 'PDF_TOO_LARGE'
  | 'PDF_TOO_MANY_PAGES';

export type RenderResult =
  | {
      readonly ok: true;
      readonly fileSizeBytes: number;
      readonly pageCount: number;
      /** Time spent loading and printing (excludes upload). */
      readonly renderDurationMs: number;
    }
  | {
      readonly ok: false;
      readonly code: RenderFailureCode;
      /** Safe to show the caller: no paths, stack traces or internal addresses. */
      readonly message: string;
      /** INVALID_HTML_TEMPLATE: where in the template (1-based line) and which undefined variable. */
      readonly details?: { readonly line?: number; readonly name?: string };
    };

/** What the API side holds: a local in-process renderer or a Lambda invoker. */
export interface Renderer {
  render(request: RenderRequest): Promise<RenderResult>;
}
