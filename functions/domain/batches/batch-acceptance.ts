/**
 * A batch's acceptance in a few wide writes rather than a few per item (1,000 items answered in
 * well under API Gateway's 30 s), with the guarantees a render's acceptance gives:
 *
 * 1. Every new item's job is written (pending, its unit `reserving`, a short lease: in the
 *    sweeper's index), 25 to a request. Nothing is held yet; a crash here leaves jobs the sweeper
 *    fails once their lease runs out.
 * 2. Each new item's idempotency key is claimed for its job (a conditional write per key).
 * 3. Every new job's unit is held in one conditional write on the month (refused whole when the
 *    quota cannot cover them all: 429 PLAN_QUOTA_EXCEEDED, and the jobs and keys go). A crash
 *    after it leaves units held by jobs still `reserving`: the sweeper fails those jobs and
 *    reconciles the month from its jobs, as for a render's acceptance.
 *
 * Item keys (`items[i].idempotency_key`): within 24 hours, an item whose key the account already
 * used for the same item (the same template, options, variables and document information) is
 * that item's job again: no new job, no unit, in this batch at its place. The same key with
 * another item answers 422 IDEMPOTENCY_KEY_REUSED; a key whose job failed by a fault of the
 * service (or is gone) renders again and moves to the new job. Item keys are a space of their
 * own, apart from POST /v1/pdf's Idempotency-Key.
 */
import { createHash } from 'node:crypto';
import type { Plan } from '../../settings.js';
import { stringifyTemplateData } from '../../templating/index.js';
import { ServiceError } from '../common/errors.js';
import { newJobId } from '../common/ids.js';
import type { Principal } from '../common/principal.js';
import { checkDestination, type DestinationLookup } from '../destinations/destinations.js';
import { type Job, type NewJob, pdfObjectKey } from '../jobs/jobs.js';
import { IDEMPOTENCY_KEY_PATTERN } from '../renders/idempotency.js';
import type { RenderSource } from '../renders/render-command.js';
import type { RequestedOptions } from '../renders/render-options.js';

/** An item key's record: the item it was used for (a digest) and that item's job. */
export interface ItemKeyRecord {
  readonly bodyHash: string;
  readonly jobId: string;
}

/** The batch's writes made wide (functions/adapters/dynamodb/batch-writes.ts). */
export interface BatchWrites {
  /** New jobs written as `JobStore.create` writes one (with its lease), without the one-by-one condition: their ids are new. */
  createJobs(
    jobs: readonly NewJob[],
    lease: { readonly month: string; readonly leaseUntil: number },
  ): Promise<Job[]>;
  /** Jobs of this acceptance held in the queue: their unit `held`, leased until `leaseUntil`. */
  holdJobs(jobs: readonly Job[], leaseUntil: number): Promise<Job[]>;
  /** Removes jobs of this acceptance whose units were never held. */
  deleteJobs(jobs: readonly Job[]): Promise<void>;
  /** Jobs by id (read consistently); a missing one is absent from the map. */
  getJobs(accountId: string, ids: readonly string[]): Promise<Map<string, Job>>;
  /**
   * One unit of `month` for each job, in one write: all or none. 429 PLAN_QUOTA_EXCEEDED when the
   * plan's quota cannot cover them all. Sent twice, it holds them once.
   */
  reserveUnits(accountId: string, plan: Plan, month: string, jobIds: readonly string[]): Promise<void>;
  /** Gives back the units `reserveUnits` held for these jobs (none of them rendered). */
  releaseUnits(accountId: string, month: string, jobIds: readonly string[]): Promise<void>;
  /** The live records of these item keys. */
  itemKeys(accountId: string, keys: readonly string[]): Promise<Map<string, ItemKeyRecord>>;
  /**
   * Claims `key` for `record` if no live record has it, or the live one names `replacing` (a job
   * that failed by a fault of the service, or is gone); false when another request has it.
   */
  claimItemKey(
    accountId: string,
    key: string,
    record: ItemKeyRecord & { readonly batchId: string },
    replacing?: string,
  ): Promise<boolean>;
  /** Forgets `key` if it still names job `jobId` (an acceptance that was undone). */
  releaseItemKey(accountId: string, key: string, jobId: string): Promise<void>;
}

/** What an item key's job may have failed with and still render again: the service's faults. */
const RENDERS_AGAIN = new Set(['INTERNAL_ERROR', 'PDF_RENDERING_INTERRUPTED', 'SERVICE_BUSY']);

/** One item as acceptance sees it. */
export interface AcceptanceItem {
  readonly variables: Parameters<typeof stringifyTemplateData>[0];
  readonly metadata?: RequestedOptions['metadata'];
  /** The item's own e-invoice (replacing the batch's). */
  readonly eInvoice?: RequestedOptions['e_invoice'];
  readonly idempotencyKey?: string;
}

/** Item keys: the header's format, each once in a batch (422 naming both items otherwise). */
export const checkItemKeys = (items: readonly AcceptanceItem[]): void => {
  const first = new Map<string, number>();
  items.forEach((item, index) => {
    const key = item.idempotencyKey;
    if (key === undefined) return;
    const field = `items[${index}].idempotency_key`;
    if (!IDEMPOTENCY_KEY_PATTERN.test(key)) {
      const issue = 'must be 1-255 printable ASCII characters';
      throw new ServiceError('VALIDATION_ERROR', `${field} ${issue}`, { details: [{ field, issue }] });
    }
    const earlier = first.get(key);
    if (earlier !== undefined) {
      const issue = `repeats the idempotency_key of items[${earlier}]: each item of a batch needs its own`;
      throw new ServiceError('VALIDATION_ERROR', `${field} ${issue}`, { details: [{ field, issue }] });
    }
    first.set(key, index);
  });
};

/** Sorted keys: the same options in another key order are the same item. */
const canonical = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(canonical)
    : value !== null && typeof value === 'object'
      ? Object.fromEntries(
          Object.keys(value)
            .sort()
            .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
            .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
        )
      : value;

/**
 * What an item key stands for: everything its render depends on (the template as named, the
 * batch's options, the item's variables as sent and its document information), not the batch's
 * other items or its webhook.
 */
export const itemBodyHash = (
  source: RenderSource,
  options: RequestedOptions,
  item: AcceptanceItem,
): string => {
  const { metadata, ...rest } = options;
  return createHash('sha256')
    .update(
      JSON.stringify([
        canonical(source),
        canonical(rest),
        canonical(item.metadata ?? metadata ?? null),
        stringifyTemplateData(item.variables),
        // Only when given: the hashes of items without one stay as they were.
        ...(item.eInvoice ? [canonical(item.eInvoice)] : []),
      ]),
    )
    .digest('hex');
};

export interface AcceptedItems {
  /** The new jobs, unit held, still `reserving` (the caller holds them in the queue). */
  readonly created: readonly { readonly index: number; readonly job: Job }[];
  /** Items that are an earlier item's job again, by index. */
  readonly replayed: ReadonlyMap<number, Job>;
  /** Undoes it all (units back, keys forgotten, jobs removed); never throws. */
  readonly undo: () => Promise<void>;
}

export interface AcceptDeps {
  readonly writes: BatchWrites;
  readonly onFault: (message: string, error: unknown) => void;
  /** 429 for a batch whose new items the quota cannot cover. */
  readonly quotaExceeded: (wanted: number) => Promise<ServiceError>;
  /** Told once the items' keys are settled and the first write is next (some item is new). */
  readonly writing?: () => void;
  /**
   * Keys an item's body hash before it is kept or compared (an HMAC: the batch's options may hold
   * a `protection`'s passwords; idempotency.ts, keyedIdempotency). @default the hash as it is
   */
  readonly digest?: (hash: string) => Promise<string>;
  /**
   * Whether batch `batchId` was accepted (its record written, the last write before its 202): an
   * item key's job still `reserving` belongs to an accepted batch until its consumer holds it.
   * @default none is: such a key is busy
   */
  readonly batchAccepted?: (accountId: string, batchId: string) => Promise<boolean>;
}

/** A request that claimed none of its keys answers this when another request has one. */
const keyBusy = (index: number) =>
  new ServiceError(
    'SERVICE_BUSY',
    `items[${index}].idempotency_key is being accepted by another request; retry in a moment`,
    { retryAfterSeconds: 1 },
  );

/**
 * The items' jobs written and their units held (new items), or the earlier jobs of the items
 * whose keys replay; nothing held when it throws.
 */
export const acceptItems = async (
  deps: AcceptDeps,
  o: {
    readonly principal: Principal;
    readonly plan: Plan;
    readonly month: string;
    readonly batchId: string;
    readonly leaseUntil: number;
    readonly source: RenderSource;
    readonly options: RequestedOptions;
    readonly items: readonly AcceptanceItem[];
    /** Item `index`'s job (its id is `jobId`). */
    readonly job: (jobId: string, index: number) => Omit<NewJob, 'id' | 'object_key' | 'batch_item'>;
  },
): Promise<AcceptedItems> => {
  const { writes } = deps;
  const { accountId } = o.principal;
  const hashes = new Map<number, string>();
  const keys: string[] = [];
  const digest = deps.digest ?? (async (hash: string) => hash);
  for (const [index, item] of o.items.entries()) {
    if (item.idempotencyKey === undefined) continue;
    hashes.set(index, await digest(itemBodyHash(o.source, o.options, item)));
    keys.push(item.idempotencyKey);
  }

  // Which keyed items are an earlier item's job again, and which keys move to a new job.
  const replayed = new Map<number, Job>();
  const replacing = new Map<number, string>();
  if (keys.length > 0) {
    const records = await writes.itemKeys(accountId, keys);
    for (const [index, hash] of hashes) {
      const record = records.get(o.items[index]?.idempotencyKey as string);
      if (!record) continue;
      if (record.bodyHash !== hash) {
        const field = `items[${index}].idempotency_key`;
        throw new ServiceError(
          'IDEMPOTENCY_KEY_REUSED',
          `${field} was already used with a different item (template, options, variables or metadata)`,
          { details: [{ field, issue: 'was used with a different item' }] },
        );
      }
      replacing.set(index, record.jobId);
    }
    const earlier = await writes.getJobs(accountId, [...replacing.values()]);
    // One read per earlier batch, however many of its items are sent again.
    const acceptedBatches = new Map<string, Promise<boolean>>();
    const batchAccepted = (batchId: string) => {
      let answer = acceptedBatches.get(batchId);
      if (answer === undefined) {
        answer = deps.batchAccepted?.(accountId, batchId).then((a) => a === true) ?? Promise.resolve(false);
        acceptedBatches.set(batchId, answer);
      }
      return answer;
    };
    for (const [index, jobId] of replacing) {
      const job = earlier.get(jobId);
      // Still being accepted by the request that claimed the key (it may yet be undone), unless
      // that request's batch was accepted: then its job is the item's, held by its consumer soon.
      if (job?.unit === 'reserving') {
        const batchId = job.batch_id ?? undefined;
        const accepted = batchId !== undefined && (await batchAccepted(batchId));
        if (!accepted) throw keyBusy(index);
      }
      if (job && !(job.status === 'failed' && RENDERS_AGAIN.has(job.error?.code ?? ''))) {
        replayed.set(index, job);
        replacing.delete(index);
      }
    }
  }

  const fresh = o.items.map((_, index) => index).filter((index) => !replayed.has(index));
  if (fresh.length === 0) return { created: [], replayed, undo: async () => {} };

  deps.writing?.();
  const jobs = await writes.createJobs(
    fresh.map((index) => {
      const id = newJobId();
      return { ...o.job(id, index), id, object_key: pdfObjectKey(accountId, id), batch_item: index };
    }),
    { month: o.month, leaseUntil: o.leaseUntil },
  );
  const created = fresh.map((index, i) => ({ index, job: jobs[i] as Job }));

  const claimed: { key: string; jobId: string }[] = [];
  let unitsHeld = false;
  const undo = async () => {
    try {
      if (unitsHeld)
        await writes.releaseUnits(
          accountId,
          o.month,
          jobs.map((j) => j.id),
        );
      await Promise.all(claimed.map((c) => writes.releaseItemKey(accountId, c.key, c.jobId)));
      await writes.deleteJobs(jobs);
    } catch (e) {
      // Left to the sweeper: the jobs' leases run out, the month is reconciled from its jobs.
      deps.onFault('undoing a batch acceptance failed', e);
    }
  };
  try {
    const keyed = created.filter(({ index }) => hashes.has(index));
    for (let i = 0; i < keyed.length; i += 25) {
      await Promise.all(
        keyed.slice(i, i + 25).map(async ({ index, job }) => {
          const key = o.items[index]?.idempotencyKey as string;
          const record = { bodyHash: hashes.get(index) as string, jobId: job.id, batchId: o.batchId };
          if (!(await writes.claimItemKey(accountId, key, record, replacing.get(index))))
            throw keyBusy(index);
          claimed.push({ key, jobId: job.id });
        }),
      );
    }
    try {
      await writes.reserveUnits(
        accountId,
        o.plan,
        o.month,
        jobs.map((j) => j.id),
      );
    } catch (e) {
      if (e instanceof ServiceError && e.code === 'PLAN_QUOTA_EXCEEDED')
        throw await deps.quotaExceeded(jobs.length);
      // Unknown whether they are held: released (a release of units not held changes nothing).
      unitsHeld = true;
      throw e;
    }
    unitsHeld = true;
  } catch (e) {
    await undo();
    throw e;
  }
  return { created, replayed, undo };
};

/**
 * What a batch names besides its items, checked before anything is held: its webhook endpoint
 * (404 WEBHOOK_ENDPOINT_NOT_FOUND) and its destination (404 DESTINATION_NOT_FOUND), the caller's own.
 */
export const checkNamed = async (
  deps: {
    readonly webhooks?: { exists(accountId: string, webhookId: string): Promise<boolean> };
    readonly destinations?: DestinationLookup;
  },
  accountId: string,
  command: { readonly webhookId: string | null; readonly destinationId?: string | null },
): Promise<void> => {
  const { webhookId } = command;
  if (webhookId !== null && deps.webhooks && !(await deps.webhooks.exists(accountId, webhookId))) {
    throw new ServiceError('WEBHOOK_ENDPOINT_NOT_FOUND', `Webhook endpoint ${webhookId} was not found`);
  }
  await checkDestination(deps.destinations, accountId, command.destinationId);
};
