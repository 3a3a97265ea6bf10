/**
 * Delivery of a job's PDF into its destination (issue 36, item 3): after the PDF is stored, the
 * delivery queue's consumer copies it into the customer's bucket at the key its template makes.
 *
 * A job's delivery is a record (`JobDelivery`: status, bucket, key, etag, delivered_at, attempts,
 * error). Each message carries the attempt it is for; an attempt's outcome is written only on a
 * record that has exactly the attempts before it (a conditional write: `DeliveryRecords.put`), so
 * a duplicate message is dropped and the record moves forward once per attempt. A put that fails
 * is tried again on the webhook sender's schedule (`nextAttemptAt`: the first wait, doubling,
 * within the window); the window closed, the delivery fails. The event (`delivered` / `failed`)
 * is told by the one handler whose write ended the delivery: once, however many puts failed first
 * and however often a message came.
 *
 * Wired (services.ts): a job that names `destination_id` starts its delivery when it completes
 * (its JobEvents), and the delivery queue's consumer (functions/deliveries) handles each message.
 */
import { isoNow } from '../common/clock.js';
import { ServiceError } from '../common/errors.js';
import type { Clock, MessageQueue } from '../common/ports.js';
import type { Job, JobDelivery } from '../jobs/jobs.js';
import { nextAttemptAt, type RetrySchedule } from '../webhooks/webhooks.js';
import {
  DESTINATION_FAILURES,
  type DestinationStore,
  DestinationWriteError,
  type DestinationWriter,
  destinationKey,
  type KeyTemplateJob,
  targetOf,
} from './destinations.js';

export type { DeliveryStatus, JobDelivery } from '../jobs/jobs.js';

/**
 * Where a job's delivery is kept: the job's item in the table (adapters/dynamodb/deliveries.ts),
 * memory for tests; held to test/contract/destinations.contract.ts.
 */
export interface DeliveryRecords {
  get(accountId: string, jobId: string): Promise<JobDelivery | undefined>;
  /**
   * Writes `next` when the record holds exactly `afterAttempts` attempts and is pending (null:
   * when there is no record yet): true when written, false when another write came first.
   */
  put(accountId: string, jobId: string, next: JobDelivery, afterAttempts: number | null): Promise<boolean>;
}

/** One attempt of one job's delivery (ids only). */
export interface DeliveryMessage {
  readonly account_id: string;
  readonly job_id: string;
  /** The attempt this message is for, 1 for the first. */
  readonly attempt: number;
}

/** What a delivering job is to the deliverer: its key's fields and where its PDF is. */
export interface DeliverableJob extends KeyTemplateJob {
  readonly account_id: string;
  readonly object_key: string;
}

/** A stored job as the deliverer reads it; undefined when there is none (or it did not complete). */
export const deliverableOf = (job: Job | undefined): DeliverableJob | undefined =>
  job && job.status === 'completed'
    ? {
        id: job.id,
        account_id: job.account_id,
        object_key: job.object_key,
        created_at: job.created_at,
        kind: job.kind ?? 'render',
        reference: job.reference ?? null,
        file_name: job.file_name ?? null,
        batch_id: job.batch_id ?? null,
        template_id: job.template_id,
      }
    : undefined;

/** Told once per delivery that ended (the account's webhooks: job.delivered, job.delivery_failed). */
export interface DeliveryEvents {
  delivered(job: DeliverableJob, delivery: JobDelivery): Promise<void>;
  failed(job: DeliverableJob, delivery: JobDelivery): Promise<void>;
}

export interface DelivererDeps {
  readonly records: DeliveryRecords;
  readonly destinations: Pick<DestinationStore, 'get'>;
  readonly writer: DestinationWriter;
  readonly jobs: { get(accountId: string, jobId: string): Promise<DeliverableJob | undefined> };
  /** The stored PDF's bytes. */
  readonly readPdf: (objectKey: string) => Promise<Uint8Array>;
  readonly queue: MessageQueue<DeliveryMessage>;
  readonly events: DeliveryEvents;
  /** The webhook sender's (settings: webhookFirstRetrySeconds, webhookRetryWindowSeconds). */
  readonly schedule: RetrySchedule;
  readonly clock: Clock;
}

/** SQS delays a message at most 15 minutes; a longer wait is made of several. */
const MAX_DELAY_SECONDS = 900;

export type DeliveryOutcome = 'delivered' | 'retrying' | 'failed' | 'waiting' | 'duplicate';

export const createDeliverer = (deps: DelivererDeps) => {
  const { records, clock } = deps;
  const end = async (
    job: DeliverableJob,
    current: JobDelivery,
    next: JobDelivery,
  ): Promise<DeliveryOutcome> => {
    if (!(await records.put(job.account_id, job.id, next, current.attempts))) return 'duplicate';
    if (next.status === 'delivered') await deps.events.delivered(job, next);
    else await deps.events.failed(job, next);
    return next.status === 'delivered' ? 'delivered' : 'failed';
  };
  return {
    /** A stored job that names a destination: its delivery recorded pending, its first attempt queued. */
    async start(job: DeliverableJob, destinationId: string): Promise<void> {
      const destination = await deps.destinations.get(job.account_id, destinationId);
      const pending: JobDelivery = {
        status: 'pending',
        destination_id: destinationId,
        bucket: destination?.bucket ?? '',
        key: null,
        etag: null,
        delivered_at: null,
        attempts: 0,
        error: null,
        window_started_at: clock.now().getTime(),
      };
      // Recorded once. A second telling of the job's end (a retry after the queue failed, or
      // another teller) queues the first attempt again while none has run: a message lost to a
      // queue fault would otherwise leave the delivery pending for good. The attempt count fences
      // the extra message (handle answers 'duplicate').
      if (!(await records.put(job.account_id, job.id, pending, null))) {
        const current = await records.get(job.account_id, job.id);
        if (current?.status !== 'pending' || current.attempts !== 0) return;
      }
      await deps.queue.send({ account_id: job.account_id, job_id: job.id, attempt: 1 });
    },

    /** One message: one attempt, its outcome recorded, the next queued or the end told. */
    async handle(message: DeliveryMessage): Promise<DeliveryOutcome> {
      const current = await records.get(message.account_id, message.job_id);
      if (!current || current.status !== 'pending' || current.attempts !== message.attempt - 1)
        return 'duplicate';
      const now = clock.now().getTime();
      const due = nextAttemptAt(deps.schedule, current.window_started_at, current.attempts) ?? now;
      if (due > now) {
        // Longer than SQS holds a message back: passed on, as the webhook sender's waits are.
        await deps.queue.send(message, {
          delaySeconds: Math.min(MAX_DELAY_SECONDS, Math.ceil((due - now) / 1000)),
        });
        return 'waiting';
      }
      const job = await deps.jobs.get(message.account_id, message.job_id);
      const destination = job
        ? await deps.destinations.get(job.account_id, current.destination_id)
        : undefined;
      const attempts = current.attempts + 1;
      if (!job) {
        // Its record expired: nothing to deliver, and no job to tell of.
        await records.put(
          message.account_id,
          message.job_id,
          { ...current, status: 'failed', attempts, error: 'the job is gone' },
          current.attempts,
        );
        return 'failed';
      }
      if (!destination) {
        return end(job, current, {
          ...current,
          status: 'failed',
          attempts,
          error: 'the destination was deleted',
        });
      }
      let key: string;
      try {
        key = destinationKey(destination, job);
      } catch (e) {
        if (!(e instanceof ServiceError)) throw e;
        return end(job, current, { ...current, status: 'failed', attempts, error: e.message });
      }
      try {
        const { etag } = await deps.writer.put(
          targetOf(destination),
          key,
          await deps.readPdf(job.object_key),
          'application/pdf',
        );
        return end(job, current, {
          ...current,
          status: 'delivered',
          bucket: destination.bucket,
          key,
          etag,
          delivered_at: isoNow(clock.now()),
          attempts,
          error: null,
        });
      } catch (e) {
        if (!(e instanceof DestinationWriteError)) throw e;
        const error = `${e.reason}: ${DESTINATION_FAILURES[e.reason]} (${e.detail})`;
        const failed: JobDelivery = { ...current, bucket: destination.bucket, key, attempts, error };
        const nextDue = nextAttemptAt(deps.schedule, current.window_started_at, attempts);
        if (nextDue === undefined) return end(job, current, { ...failed, status: 'failed' });
        if (!(await records.put(job.account_id, job.id, failed, current.attempts))) return 'duplicate';
        await deps.queue.send(
          { account_id: job.account_id, job_id: job.id, attempt: attempts + 1 },
          {
            delaySeconds: Math.min(
              MAX_DELAY_SECONDS,
              Math.max(0, Math.ceil((nextDue - clock.now().getTime()) / 1000)),
            ),
          },
        );
        return 'retrying';
      }
    },
  };
};

export type Deliverer = ReturnType<typeof createDeliverer>;
