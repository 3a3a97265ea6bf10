/**
 * An async merge's order (issue 36): what the render queue's consumer needs to run a merge that
 * was accepted with `202`, stored where async renders keep theirs (`orders/{account}/{job}.json`,
 * async-renders.ts RenderOrders) and deleted once the merge ended.
 *
 * A render part is kept as its request gave it (source, variables as text, options as given):
 * the consumer prepares and accepts it when the merge runs, as a sync merge does at once. Once a
 * part's own job completed, the order is written again with that job and what it rendered
 * (`done`), so an attempt after a fault of ours merges the part rendered before rather than
 * rendering (and charging) it again. A part never carries a password: merge parts refuse
 * `protection` (request.ts), so an order holds no secret.
 */
import type { PdfMetadata } from '../common/ports.js';
import type { CredentialKind } from '../common/principal.js';
import type { RenderSource } from '../renders/render-command.js';
import type { RequestedOptions } from '../renders/render-options.js';
import type { StoredOrder } from '../renders/render-order.js';

export interface StoredRenderPart {
  readonly kind: 'render';
  readonly title: string | null;
  readonly source: RenderSource;
  /** The variables' JSON text (TemplateDataText.text): key order and numbers as sent. */
  readonly variables: string;
  readonly options: RequestedOptions;
  /** Rendered by an earlier attempt: its completed job, and what it rendered (for a second layout). */
  readonly done?: { readonly jobId: string; readonly order: StoredOrder };
}

export interface StoredJobPart {
  readonly kind: 'job';
  readonly jobId: string;
  readonly title: string | null;
}

export interface StoredMergeOrder {
  readonly v: 1;
  readonly kind: 'merge';
  /** Whose merge: the caller's account and plan when it was accepted. */
  readonly principal: {
    readonly accountId: string;
    readonly plan: string;
    readonly credential: CredentialKind;
  };
  readonly parts: readonly (StoredRenderPart | StoredJobPart)[];
  readonly pageNumbers: 'continuous' | 'per_part';
  readonly outline: boolean;
  readonly metadata: PdfMetadata | undefined;
}

export const isMergeOrder = (order: { readonly kind?: unknown } | undefined): order is StoredMergeOrder =>
  order?.kind === 'merge';
