/**
 * A render as the use cases pass it on: its order (what to render and how, options checked), how
 * it runs (sync or async, and what it names), once accepted (pdf-jobs.ts `accept`), and answered.
 *
 * Round trips of a sync render (DynamoDB unless said; `∥`: side by side, one round trip):
 *   account read (auth) → rate window write ∥ month's unit counters read (∥ a saved template's
 *   reads ∥ the webhook endpoint's ∥ the idempotency answer's, when the request names them) →
 *   [the key's claim] → job write → unit write → render ∥ job to `rendering` (unit held) → job
 *   completed → month's totals (∥ the key's answer).
 * What a crash between two steps leaves, for the steps made side by side:
 * - The reads beside the rate limit's write (early-reads.ts) write nothing: a crash, a 429 for the
 *   rate, a replay or a 422 leave only the rate count, as before. Their answers are used in the
 *   contract's order (a missing template or endpoint answers 404 after idempotency, as before).
 *   The counters are trusted only when they allow a reservation (the unit write decides; a
 *   refused one deletes its job), and a refusal they imply is confirmed by a fresh read, so a
 *   unit given back since is not refused. The template is the one current when the request came.
 * - The key's answer beside the month's totals, both after the job completed: answer without
 *   totals leaves what a crash between completion and totals always left (the totals miss the
 *   render, its unit stays counted as running until the month is next reconciled); totals without
 *   answer leave a claim whose lease runs out, and a retry renders again, as a crash before the
 *   answer always did. An answer that fails is thrown once the totals are written, as before.
 * Not made side by side, because a crash between them would leave what nobody settles:
 * - job and unit: a unit that landed without its job is held by no job the sweeper can find;
 * - rate window and job (or claim): a 429 for the rate would leave a job (or claim) written;
 * - completion and totals: totals without the completion leave, after a crash, a failed render's
 *   bytes and time in the month's totals (the sweeper gives the unit back, but reconciling works
 *   out only the unit counters); and a completion refused after the totals landed fails a job
 *   whose unit can no longer be given back (its release finds it recorded, not held);
 * - the job's `rendering` and held unit, made with the job: it is held only once the unit write
 *   landed (a job marked held whose reservation was refused would be counted as running).
 */
import type { TemplateDataText } from '../../templating/index.js';
import type { RenderRequest } from '../common/ports.js';
import type { Principal } from '../common/principal.js';
import type { Job, JobMode, JobView } from '../jobs/jobs.js';
import type { TemplateField } from '../templates/template-check.js';
import type { RenderCommand } from './render-command.js';
import type { RenderOptions, RequestedOptions } from './render-options.js';

/** A render request whose options are checked: what it renders and how. */
export interface RenderOrder {
  readonly source: RenderCommand['source'];
  readonly variables: TemplateDataText;
  readonly options: RenderOptions;
  /** The options as the request gave them, over a saved template's own. Absent: none given. */
  readonly requested?: RequestedOptions;
}

/** What the consumer needs to render an accepted job: its AcceptedRender, less what the job record holds. */
export interface StoredOrder {
  readonly v: 1;
  readonly field: TemplateField;
  /** Variables as text (stringifyTemplateData): key order, `10.0` and big integers kept. */
  readonly template: RenderRequest['template'];
  readonly options: RenderOptions;
  readonly offline: boolean;
  /** Absent: a render's order (an async merge's has `kind: "merge"`). */
  readonly kind?: undefined;
}

/** A render that was accepted: its template parsed, a quota unit held, its job created (pending). */
export interface AcceptedRender {
  readonly job: Job;
  /** The month whose quota unit the render holds. */
  readonly month: string;
  readonly field: TemplateField;
  readonly template: RenderRequest['template'];
  readonly options: RenderOptions;
  /** Another account's template: it renders with no network egress at all (RenderRequest.offline). */
  readonly offline: boolean;
}

/** A render's answer: the job, and whether it repeats an earlier request's (idempotent replay). */
export interface Rendered {
  readonly job: JobView;
  readonly replayed: boolean;
}

/** How a job is run, and what it names besides its render. */
export interface Placement {
  readonly mode: JobMode;
  readonly webhookId: string | null;
  readonly batchId: string | null;
  /** The download's name (RenderCommand.fileName); absent or null: `{job_id}.pdf`. */
  readonly fileName?: string | null | undefined;
  /** The account's destination the PDF is delivered into; absent or null: none. */
  readonly destinationId?: string | null | undefined;
}

export const SYNC: Placement = { mode: 'sync', webhookId: null, batchId: null };

/**
 * How a request's render runs once its idempotency claim is held: sync by default (`execute`).
 * `onCompleted`, when the run completes the job itself, is called with it beside the job's usage
 * record (the claim's answer is written then); it must not throw. A run that does not call it (an
 * async one, or a job found completed after a fault) leaves the answer to be written after it.
 */
export type RenderRun = (
  principal: Principal,
  order: RenderOrder,
  renewAlso?: () => Promise<unknown>,
  onCompleted?: (completed: Job) => Promise<unknown>,
) => Promise<JobView>;
