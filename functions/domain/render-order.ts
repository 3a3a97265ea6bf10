/**
 * A render as the use cases pass it on: its order (what to render and how, options checked), how
 * it runs (sync or async, and what it names), once accepted (pdf-jobs.ts `accept`), and answered.
 */
import type { TemplateDataText } from '../templating/index.js';
import type { Job, JobMode, JobView } from './jobs.js';
import type { RenderRequest } from './ports.js';
import type { Principal } from './principal.js';
import type { RenderCommand } from './render-command.js';
import type { RenderOptions, RequestedOptions } from './render-options.js';
import type { TemplateField } from './template-check.js';

/** A render request whose options are checked: what it renders and how. */
export interface RenderOrder {
  readonly source: RenderCommand['source'];
  readonly variables: TemplateDataText;
  readonly options: RenderOptions;
  /** The options as the request gave them, over a saved template's own. Absent: none given. */
  readonly requested?: RequestedOptions;
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
