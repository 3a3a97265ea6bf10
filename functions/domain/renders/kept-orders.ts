/**
 * A completed job's render order, kept when the job prints page numbers (issue 36): a merge with
 * `page_numbers: "continuous"` lays such a job part out again at its place in the whole, as it
 * does a part rendered for the merge (merges.ts).
 *
 * What is kept is what an async render's order holds (StoredOrder: the template's html as it was
 * rendered, header and footer, the variables' text, the checked options), written by the order
 * store (RenderOrders) beside the job's PDF, `pdf/{account}/{job}.order.json`, so the PDFs'
 * lifecycle rule deletes it with the PDF (the `orders/` rule keeps a pending order 14 days, a PDF
 * 30 by default). Never a password: a protected job's order is withheld (`withheld:
 * "protection"`), and a merge with continuous numbers refuses that job part by name.
 *
 * Written beside the render (a sync render's PUT runs while Chromium prints, so it adds no round
 * trip to the answer), the async consumer's beside the job's completion. A render that fails has
 * its kept order deleted; a write that fails is told and the job completes all the same (a
 * continuous merge then refuses the part by name, as a job made before kept orders).
 */
import { printsPageNumbers } from '../jobs/jobs.js';
import type { AcceptedRender, StoredOrder } from './render-order.js';

export type KeptOrder = StoredOrder | { readonly v: 1; readonly withheld: 'protection' };

export const isWithheld = (order: KeptOrder): order is Extract<KeptOrder, { withheld: string }> =>
  'withheld' in order;

/** Object key (in the PDF bucket) of a job's kept order: under pdf/, expiring with its PDF. */
export const keptOrderObjectKey = (accountId: string, jobId: string): string =>
  `pdf/${accountId}/${jobId}.order.json`;

/** The kept orders' side of the order store (RenderOrders). */
export interface KeptOrders {
  keep(accountId: string, jobId: string, order: KeptOrder): Promise<void>;
  /** Undefined: none kept (the job prints no page numbers, was made before kept orders, or its write failed). */
  kept(accountId: string, jobId: string): Promise<KeptOrder | undefined>;
  discardKept(accountId: string, jobId: string): Promise<void>;
}

/** What is kept of an accepted render: its order, without any password. */
export const keptOrder = (accepted: AcceptedRender): KeptOrder =>
  accepted.options.protection
    ? { v: 1, withheld: 'protection' }
    : {
        v: 1,
        field: accepted.field,
        template: accepted.template,
        options: accepted.options,
        offline: accepted.offline,
      };

/** Whether an accepted render's order is kept: it prints page numbers. */
export const keepsOrder = (accepted: AcceptedRender): boolean =>
  printsPageNumbers({ ...accepted.template, options: accepted.options });

/**
 * Keeps the order of a render that prints page numbers; a fault is told, never thrown (the job
 * completes all the same). Resolves true when an order was kept.
 */
export const keepOrder = async (
  store: Pick<KeptOrders, 'keep'> | undefined,
  accepted: AcceptedRender,
  onFault: (message: string, error: unknown) => void,
): Promise<boolean> => {
  if (!store || !keepsOrder(accepted)) return false;
  try {
    await store.keep(accepted.job.account_id, accepted.job.id, keptOrder(accepted));
    return true;
  } catch (e) {
    onFault('keeping a render order failed (a merge with continuous numbers will refuse the job)', e);
    return false;
  }
};
