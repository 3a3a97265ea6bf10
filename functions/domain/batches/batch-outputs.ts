/**
 * A batch's outputs (POST /v1/batches `output: {merged_pdf, zip}`): once the batch completed, one
 * message on the batch output queue, and its consumer (functions/batch-outputs/) builds them once
 * from the completed items in item order: the merged PDF (the merge's assembler, one outline entry
 * per item) and a ZIP (streamed to the bucket entry by entry, never whole in memory) of the items'
 * PDFs named by their `file_name`, with a manifest that lists every item, the failed ones with
 * their error. Then, and only then, `batch.completed` is told: its payload carries the links.
 *
 * A batch without outputs is told `batch.completed` when its last job ends, as before
 * (`completionEvents`). The batch's order (which carries the items' file names) is kept for the
 * builder and deleted by it.
 */
import { ServiceError } from '../common/errors.js';
import type { MessageQueue } from '../common/ports.js';
import type { Job } from '../jobs/jobs.js';
import type { PdfAssembler } from '../merges/merges.js';
import {
  type Batch,
  type BatchEvents,
  type BatchOutput,
  type BatchOutputs,
  type BatchStore,
  type BatchView,
  wantsOutputs,
} from './batch-counter.js';

export type { BatchOutput, BatchOutputs } from './batch-counter.js';

import type { BatchOrders } from './batch-queue.js';

/** The batch output queue's message: ids only. */
export interface BatchOutputMessage {
  readonly v: 1;
  readonly account_id: string;
  readonly batch_id: string;
}

export const batchMergedPdfKey = (accountId: string, batchId: string): string =>
  `pdf/${accountId}/${batchId}.pdf`;
export const batchZipKey = (accountId: string, batchId: string): string => `pdf/${accountId}/${batchId}.zip`;

/** One entry of a ZIP: an object of the bucket, or text. */
export type ArchiveEntry =
  | { readonly name: string; readonly objectKey: string }
  | { readonly name: string; readonly text: string };

/** Writes a ZIP of `entries` to `objectKey`, streamed: each entry read as its turn comes. */
export interface BatchArchiver {
  zip(entries: readonly ArchiveEntry[], objectKey: string): Promise<{ readonly bytes: number }>;
}

/**
 * What a batch's completion tells: a batch with outputs asks for them to be built (its
 * `batch.completed` comes once they are); one without is told at once.
 */
export const completionEvents = (deps: {
  readonly events: BatchEvents;
  /** Taken only when a batch wants outputs: a function that never completes one needs no queue. */
  readonly queue: () => MessageQueue<BatchOutputMessage>;
}): BatchEvents => ({
  async completed(view) {
    if (!wantsOutputs(view.batch)) return deps.events.completed(view);
    await deps.queue().send({ v: 1, account_id: view.batch.account_id, batch_id: view.batch.id });
  },
});

/** A ZIP entry's name: the item's file_name, else `{n}-{job_id}.pdf`; made unique within the ZIP. */
export const entryNames = (items: readonly { index: number; jobId: string; fileName: string | null }[]) => {
  const used = new Set<string>(['manifest.json']);
  return items.map(({ index, jobId, fileName }) => {
    const wanted = fileName ?? `${String(index + 1).padStart(4, '0')}-${jobId}.pdf`;
    let name = wanted;
    for (let n = 2; used.has(name); n++) name = wanted.replace(/(\.pdf)?$/i, ` (${n})$1`);
    used.add(name);
    return name;
  });
};

export interface BatchOutputDeps {
  readonly batches: Pick<BatchStore, 'get' | 'jobs' | 'recordOutputs'>;
  /** Jobs by id (a batch's replayed items are earlier jobs of other batches). */
  readonly getJobs: (accountId: string, ids: readonly string[]) => Promise<ReadonlyMap<string, Job>>;
  readonly orders: Pick<BatchOrders, 'get' | 'delete'>;
  readonly assembler: PdfAssembler;
  readonly archiver: BatchArchiver;
  /** batch.completed, told once the outputs are recorded (the webhooks'). */
  readonly events: BatchEvents;
  /** The batch as it is told, with its counts and links. */
  readonly view: (batch: Batch) => Promise<BatchView>;
  readonly now: () => Date;
  readonly limits: { readonly maxPdfBytes: number; readonly maxPdfPages: number };
  readonly onFault: (message: string, error: unknown) => void;
}

const PAGE = 100;

export const createBatchOutputs = (deps: BatchOutputDeps) => {
  const { batches } = deps;

  /** The batch's jobs by item index: its own (their `batch_item`, else listing order), replayed ones read. */
  const jobsOf = async (batch: Batch): Promise<(Job | undefined)[]> => {
    const byIndex: (Job | undefined)[] = new Array(batch.total).fill(undefined);
    const replayed = Object.entries(batch.replayed ?? {}).map(([i, id]) => [Number(i), id] as const);
    const replayedAt = new Set(replayed.map(([i]) => i));
    const free = [...byIndex.keys()].filter((i) => !replayedAt.has(i));
    let listed = 0;
    for (let offset = 0; ; offset += PAGE) {
      const page = await batches.jobs(batch.account_id, batch.id, { offset, limit: PAGE });
      for (const job of page) {
        const at = job.batch_item ?? free[listed];
        listed++;
        if (at !== undefined && at < batch.total) byIndex[at] = job;
      }
      if (page.length < PAGE) break;
    }
    if (replayed.length > 0) {
      const others = await deps.getJobs(
        batch.account_id,
        replayed.map(([, id]) => id),
      );
      for (const [i, id] of replayed) byIndex[i] = others.get(id);
    }
    return byIndex;
  };

  const build = async (batch: Batch): Promise<BatchOutputs> => {
    const order = await deps.orders.get(batch.account_id, batch.id);
    const jobs = await jobsOf(batch);
    const names = entryNames(
      jobs.map((job, index) => ({
        index,
        jobId: job?.id ?? 'missing',
        fileName: order?.outputs?.file_names[index] ?? null,
      })),
    );
    const done = jobs.flatMap((job, index) =>
      job?.status === 'completed' ? [{ job, name: names[index] as string }] : [],
    );
    const output = batch.output as BatchOutput;
    let mergedKey: string | null = null;
    if (output.merged_pdf && done.length > 0) {
      mergedKey = batchMergedPdfKey(batch.account_id, batch.id);
      const merged = await deps.assembler.assemble({
        parts: done.map(({ job, name }) => ({
          objectKey: job.object_key,
          title: name.replace(/\.pdf$/i, ''),
        })),
        objectKey: mergedKey,
        outline: true,
        metadata: undefined,
        maxPdfBytes: deps.limits.maxPdfBytes,
        maxPages: deps.limits.maxPdfPages,
      });
      if (!merged.ok) throw new ServiceError(merged.code, `merged_pdf: ${merged.message}`);
    }
    let zipKey: string | null = null;
    if (output.zip) {
      zipKey = batchZipKey(batch.account_id, batch.id);
      const manifest = {
        batch_id: batch.id,
        total: batch.total,
        completed: done.length,
        failed: jobs.filter((j) => j?.status !== 'completed').length,
        items: jobs.map((job, index) => ({
          item: index,
          job_id: job?.id ?? null,
          status: job?.status ?? 'missing',
          file_name: job?.status === 'completed' ? names[index] : null,
          reference: job?.reference ?? null,
          error: job?.error ?? (job ? null : { code: 'INTERNAL_ERROR', message: 'the job is gone' }),
        })),
      };
      await deps.archiver.zip(
        [
          ...done.map(({ job, name }) => ({ name, objectKey: job.object_key })),
          { name: 'manifest.json', text: `${JSON.stringify(manifest, null, 2)}\n` },
        ],
        zipKey,
      );
    }
    return {
      status: 'ready',
      merged_pdf_key: mergedKey,
      zip_key: zipKey,
      error: null,
      built_at: deps.now().toISOString(),
    };
  };

  return {
    /**
     * Builds the outputs of the batch the message names, once: a batch already built (a message
     * delivered twice), not completed or without outputs is left alone. A failure of the build
     * itself (a part too large, too many pages) is recorded as the outputs' failure; a fault of
     * ours is thrown (the message comes back).
     */
    async handle(message: BatchOutputMessage): Promise<'built' | 'failed' | 'skipped'> {
      const batch = await batches.get(message.account_id, message.batch_id);
      if (batch?.status !== 'completed' || !wantsOutputs(batch) || batch.outputs?.status === 'ready') {
        return 'skipped';
      }
      let outputs: BatchOutputs;
      try {
        outputs = await build(batch);
      } catch (e) {
        if (!(e instanceof ServiceError)) throw e;
        outputs = {
          status: 'failed',
          merged_pdf_key: null,
          zip_key: null,
          error: e.message,
          built_at: deps.now().toISOString(),
        };
      }
      const recorded = await batches.recordOutputs(batch, outputs);
      if (!recorded) return 'skipped';
      await deps.orders
        .delete(batch.account_id, batch.id)
        .catch((e) =>
          deps.onFault("deleting a built batch's order failed (the lifecycle rule removes it)", e),
        );
      try {
        await deps.events.completed(await deps.view(recorded));
      } catch (e) {
        deps.onFault('publishing batch.completed failed', e);
      }
      return outputs.status === 'ready' ? 'built' : 'failed';
    },
  };
};

export type BatchOutputBuilder = ReturnType<typeof createBatchOutputs>;
