/**
 * A render request as the edge parsed it, once: what to render (inline html with its header and
 * footer, or a saved template at a version), with which variables and options, and under which
 * idempotency key. The use case (pdf-jobs.ts) decides everything else from this alone.
 */
import type { TemplateDataText } from '../../templating/index.js';
import type { JobMode } from '../jobs/jobs.js';
import type { RequestedOptions } from './render-options.js';

export type RenderSource =
  | {
      readonly kind: 'inline';
      readonly html: string;
      readonly headerHtml: string | null;
      readonly footerHtml: string | null;
    }
  | {
      readonly kind: 'saved';
      readonly templateId: string;
      /** null: the latest version. */
      readonly version: number | null;
    };

/** An Idempotency-Key, and the digest of the body it was sent with. */
export interface IdempotencyClaim {
  readonly key: string;
  readonly bodyHash: string;
}

export interface RenderCommand {
  readonly source: RenderSource;
  /** As JSON sent them: key order, `10.0` and big integers kept. */
  readonly variables: TemplateDataText;
  readonly options: RequestedOptions;
  readonly idempotency: IdempotencyClaim | null;
  /** async: `"async": true` or `Prefer: respond-async`; answered 202 with the pending job. */
  readonly mode: JobMode;
  /** The account's webhook endpoint told when the job ends (body `webhook_id`); null: none. */
  readonly webhookId: string | null;
  /** The account's destination the PDF is delivered into (body `destination_id`); null or absent: none. */
  readonly destinationId?: string | null;
  /** The download's name (`file_name`, rendered and made safe at the edge: file-name.ts); null: `{job_id}.pdf`. */
  readonly fileName?: string | null | undefined;
}
