/**
 * The usage ledger (issue 39): one entry per billable event, the record an operator bills from.
 * A render's unit becomes consumed when its job completes; the lifecycle then records the entry
 * beside the month's totals (job-lifecycle.ts, recordCompleted), and the sweeper records any a
 * crash left out when it works a month out again from its jobs (sweeper.ts, reconcile). An entry
 * is keyed by its job: recording it again (a retry, a sweep, a job completed twice by a race)
 * changes nothing, so the ledger holds exactly the month's completed jobs.
 *
 * Each entry is also a usage event to publish (usage-events.ts): it is written unpublished, and the
 * publisher marks it published once the bus took it (at least once; the job id is the dedupe key).
 *
 * The store is a port; the DynamoDB adapter is functions/adapters/dynamodb/usage-ledger.ts.
 */

/** One billable event. */
export interface UsageEntry {
  readonly account_id: string;
  /** The dedupe key: one entry, and one event id, per job. */
  readonly job_id: string;
  /** The month (`yyyy-mm`, UTC) whose quota unit the job consumed. */
  readonly month: string;
  /** What was billed: a render (a batch's item and a merge are renders too, with their kind). */
  readonly kind: 'render' | 'merge';
  readonly units: number;
  readonly pages: number;
  readonly bytes: number;
  readonly render_ms: number;
  /** The batch the job is an item of; null: none. */
  readonly batch_id: string | null;
  /** When the unit was consumed: the job's completion. */
  readonly completed_at: string;
}

/** A completed job as the ledger reads it. */
export interface BillableJob {
  readonly id: string;
  readonly account_id: string;
  readonly status: string;
  readonly usage_month?: string | undefined;
  readonly kind?: string | undefined;
  readonly page_count: number | null;
  readonly file_size_bytes: number | null;
  readonly render_duration_ms: number | null;
  readonly batch_id?: string | null | undefined;
  readonly completed_at: string | null;
  readonly updated_at: string;
}

/** The entry a completed job's unit makes in `month` (its quota's month). */
export const usageEntryOf = (job: BillableJob, month: string): UsageEntry => ({
  account_id: job.account_id,
  job_id: job.id,
  month,
  kind: job.kind === 'merge' ? 'merge' : 'render',
  units: 1,
  pages: job.page_count ?? 0,
  bytes: job.file_size_bytes ?? 0,
  render_ms: job.render_duration_ms ?? 0,
  batch_id: job.batch_id ?? null,
  completed_at: job.completed_at ?? job.updated_at,
});

export interface UsageLedger {
  /** Records the entry unless its job has one already (then nothing changes); true if this call wrote it. */
  record(entry: UsageEntry): Promise<boolean>;
  /** One account's entries of `month`, in job order. */
  ofAccountMonth(accountId: string, month: string): Promise<UsageEntry[]>;
  /** Every account's entries of `month` (an index by month, never a scan of the table). */
  ofMonth(month: string): Promise<UsageEntry[]>;
  /** Up to `limit` entries not yet published, oldest first. */
  unpublished(limit: number): Promise<UsageEntry[]>;
  /** The entry's event was taken by the bus: it leaves the unpublished ones. */
  markPublished(entry: Pick<UsageEntry, 'account_id' | 'job_id' | 'month'>): Promise<void>;
}

/** How long ledger entries are kept by default: 13 months, so a year's invoices can be re-read. */
export const DEFAULT_USAGE_LEDGER_RETENTION_DAYS = 400;

/** A month's usage of one account, as the operator's export prints it. */
export interface MonthSummary {
  readonly account_id: string;
  readonly month: string;
  readonly renders: number;
  readonly units: number;
  readonly pages: number;
  readonly bytes: number;
}

/** Sums a month's entries per account, in account order. */
export const summarizeMonth = (entries: readonly UsageEntry[]): MonthSummary[] => {
  const by = new Map<string, { -readonly [K in keyof MonthSummary]: MonthSummary[K] }>();
  for (const e of entries) {
    const s = by.get(e.account_id) ?? {
      account_id: e.account_id,
      month: e.month,
      renders: 0,
      units: 0,
      pages: 0,
      bytes: 0,
    };
    s.renders += 1;
    s.units += e.units;
    s.pages += e.pages;
    s.bytes += e.bytes;
    by.set(e.account_id, s);
  }
  return [...by.values()].sort((a, b) => (a.account_id < b.account_id ? -1 : 1));
};
