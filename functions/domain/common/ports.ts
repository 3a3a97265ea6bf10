/**
 * What the domain needs from the outside world, as the domain sees it. The implementations live
 * outside it: the renderer in functions/renderer (called in-process locally, invoked as a Lambda
 * in the cloud, see adapters/lambda/renderer-client.ts), storage in adapters/s3/pdf-storage.ts, the clock in
 * core/runtime.ts. The stores' ports are beside their entities (jobs.ts, templates.ts, ...), their
 * DynamoDB adapters in functions/adapters/dynamodb.
 */

import type { Diagnostics } from '../jobs/diagnostics.js';
import type { Job } from '../jobs/jobs.js';
import type { RenderOptions } from '../renders/render-options.js';
import type { SigningMaterial } from '../signing/signing-material.js';

export type { DiagnosticEntry, Diagnostics, DiagnosticType } from '../jobs/diagnostics.js';
export type { PdfMark } from '../renders/marks.js';
export type { PageNumbering, PaperFormat, PdfMetadata, WaitUntil } from '../renders/render-options.js';

/**
 * One render: the renderer is handed a template with its variables (the API has parsed it, the
 * renderer executes it) and a presigned PUT URL, and answers with a result. How it prints (`pdf`,
 * `pageLoad`, `metadata`) is the render's options, normalised (render-options.ts).
 */
export interface RenderRequest extends RenderOptions {
  /** The job this render is for: the renderer's log lines carry it. */
  readonly jobId: string;
  /**
   * The Jinja2 template and its variables; the renderer executes it, the HTML never leaves it.
   * `header` and `footer` are templates too, executed with the same variables in the same
   * templating job (one deadline), and printed on every page in the top and bottom margins.
   */
  readonly template: {
    readonly source: string;
    /**
     * JSON text written by stringifyTemplateData (what the API sends: key order, `10.0` and big
     * integers kept), or an object as JSON.parse makes it (fixtures, benches).
     */
    readonly variables: string | Record<string, unknown>;
    readonly header?: string | null;
    readonly footer?: string | null;
  };
  /**
   * No network egress at all for this render's page: every request and connection is refused
   * (DNS included), whatever the deployment's egress settings. For a template written by another
   * account, whose page must not carry the caller's variables anywhere. @default false
   */
  readonly offline?: boolean;
  /**
   * With a `signature`: the key it signs with, opened by the caller for this call only (an
   * uploaded private key, or the KMS key the renderer asks kms:Sign). Never stored, never logged.
   */
  readonly signingKey?: SigningMaterial;
  /**
   * The rendering account's assets by name, each with a link to its bytes: the renderer answers
   * the page's requests to the asset origin (templating/assets.ts) from these, and 404 for any
   * other name. Never the network's: the page itself makes no request for them.
   */
  readonly assets?: Readonly<Record<string, RenderAsset>>;
  /** Where to put the PDF: a presigned S3 PUT. The renderer sends exactly these headers. */
  readonly upload: { readonly url: string; readonly headers: Readonly<Record<string, string>> };
  readonly limits: {
    readonly maxPdfBytes: number;
    readonly maxPages: number;
    /** UTF-8 bytes of HTML after templating. */
    readonly maxHtmlBytes: number;
    /** UTF-8 bytes of the header's, and of the footer's, HTML after templating. @default maxHtmlBytes */
    readonly maxHeaderFooterBytes?: number;
  };
}

export type RenderFailureCode =
  | 'INVALID_HTML_TEMPLATE'
  | 'HTML_CONTENT_TOO_LARGE'
  | 'PDF_RENDERING_TIMEOUT'
  | 'PDF_RENDERING_FAILED'
  | 'PDF_STORAGE_FAILED'
  | 'PDF_TOO_LARGE'
  | 'PDF_TOO_MANY_PAGES'
  /** The document needed more memory than the renderer has (issue 37). */
  | 'PDF_TOO_COMPLEX'
  /** An option only the printed document can refute (a watermark's page past its last). */
  | 'INVALID_PDF_OPTIONS'
  | 'SERVICE_BUSY';

export type RenderResult =
  | {
      readonly ok: true;
      readonly fileSizeBytes: number;
      readonly pageCount: number;
      /** Time spent loading and printing (excludes upload). */
      readonly renderDurationMs: number;
      /** What happened inside the page. */
      readonly diagnostics?: Diagnostics;
    }
  | {
      readonly ok: false;
      readonly code: RenderFailureCode;
      /** Safe to show the caller: no paths, stack traces or internal addresses. */
      readonly message: string;
      /**
       * INVALID_HTML_TEMPLATE (and HTML_CONTENT_TOO_LARGE): where in the template (1-based line),
       * which undefined variable, and which part (absent: the html; else the header or footer).
       */
      readonly details?: { readonly line?: number; readonly name?: string; readonly part?: TemplatePart };
      /** What happened inside the page, when the render got as far as opening it. */
      readonly diagnostics?: Diagnostics;
      /** SERVICE_BUSY: when the renderer expects to have room again. */
      readonly retryAfterSeconds?: number;
    };

/** An account asset a render's page may load (domain/assets/assets.ts), by name. */
export interface RenderAsset {
  /** Where the renderer fetches its bytes: a presigned GET (a `data:` URL on memory parts). */
  readonly url: string;
  /** image/png, image/jpeg, image/webp, image/svg+xml, font/ttf, font/otf or font/woff2. */
  readonly contentType: string;
}

/** The templates a render executes besides its html. */
export type TemplatePart = 'header' | 'footer';

/** Renders a PDF; a failed render is a result, never a rejection of its own making. */
export interface Renderer {
  render(request: RenderRequest): Promise<RenderResult>;
  /**
   * A run of one batch's items (issue 43), rendered one after another in one browser context of
   * the run's own, wiped between items. Absent: each item is rendered on its own.
   */
  renderRun?(run: RenderRun): Promise<RunResults>;
}

/** The items of one run: one batch's, of one account, all offline or none. */
export interface RenderRun {
  readonly requests: readonly RenderRequest[];
  /**
   * No item after the first starts once the run has lasted this long: those come back unrendered
   * (null), to go back to the queue. What bounds how long a run holds a consumer (docs/batch-runs.md).
   */
  readonly sliceMs: number;
  /**
   * The batch the items belong to (its account and id). A renderer may keep a run's context, wiped,
   * for the next run of the same batch, and for no other run (docs/batch-runs.md).
   */
  readonly batch?: string;
}

/** Each item's result in order; null for an item the run did not start. */
export type RunResults = readonly (RenderResult | null)[];

/** Where PDFs live: presigned links only, never the bytes. */
export interface PdfStorage {
  /** A presigned PUT the renderer uploads through (it has no AWS permissions of its own). */
  uploadTarget(objectKey: string): Promise<{ url: string; headers: Record<string, string> }>;
  /** A presigned GET, signed afresh on each call, that serves the file as `<filename>`. */
  downloadUrl(objectKey: string, filename: string): Promise<string>;
}

export interface Clock {
  now(): Date;
}

/** How a message is sent: held back `delaySeconds`, and in the fair-delivery group `groupId`. */
export interface SendOptions {
  /** 0-900 s (SQS's DelaySeconds). */
  readonly delaySeconds?: number;
  /** SQS fair queues: messages of one group (an account) do not hold back another group's. */
  readonly groupId?: string;
}

/**
 * A queue of small JSON messages (ids only: never template text or variables, as SQS takes at
 * most 256 KiB and variables may be 1 MiB), delivered at least once. The SQS adapter is
 * functions/adapters/sqs/queue.ts; the local stack serves the same API (lib/local/sqs).
 */
export interface MessageQueue<T> {
  send(body: T, options?: SendOptions): Promise<void>;
  /** Many at once (SQS batches of 10); each with the same options. */
  sendMany?(bodies: readonly T[], options?: SendOptions): Promise<void>;
}

/**
 * Told once a job reaches completed or failed (sync or async, or failed by the sweeper) when the
 * job names a webhook endpoint (`webhook_id`) or a batch (`batch_id`). A failure to publish is
 * retried and logged by the caller, never the render's failure. NO_JOB_EVENTS until webhooks and
 * batches wire theirs.
 */
export interface JobEvents {
  ended(job: Job): Promise<void>;
}

export const NO_JOB_EVENTS: JobEvents = { ended: async () => {} };

/**
 * The account's webhook endpoints, as a render that names one (`webhook_id`) is checked against
 * them at acceptance (unknown: 404 WEBHOOK_ENDPOINT_NOT_FOUND). Absent: not checked.
 */
export interface WebhookEndpoints {
  exists(accountId: string, webhookId: string): Promise<boolean>;
}
