/**
 * The local stack's queues, with SQS's semantics for what the service relies on (server.ts puts
 * the SQS JSON protocol in front of them, so the same @aws-sdk/client-sqs adapter runs locally
 * and in the cloud):
 *
 * - at-least-once: a received message comes back once its visibility timeout runs out, until it
 *   is deleted; ChangeMessageVisibility moves that time (0: at once);
 * - DelaySeconds per queue and per message;
 * - redrive: a message about to be received for the (maxReceiveCount + 1)th time moves to the
 *   dead-letter queue named by the queue's RedrivePolicy instead;
 * - long polling (WaitTimeSeconds): a receive waits for a message to become visible;
 * - fair delivery across MessageGroupId (SQS "fair queues" on a standard queue): a receive serves
 *   the group served least recently first, so one group's thousand messages do not hold back
 *   another's one;
 * - retention (MessageRetentionPeriod).
 *
 * Neither npm server fits (measured with @aws-sdk/client-sqs 3.1175, the JSON protocol): fake-sqs
 * 5.0.3 answers only four query-protocol actions ("Not Found" to CreateQueue), and sqslite 2.1.1
 * (fastify 3) refuses `application/x-amz-json-1.0` with 415; both keep messages in memory only.
 *
 * Persistence: every change is appended to a journal in DATA_DIR (appendFileSync, before the
 * request is answered), so a SIGKILL loses nothing that was acknowledged; the journal is replayed
 * and rewritten compactly at start, and again whenever it has grown well past the live state.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { appendFileSync, closeSync, fsyncSync, openSync, renameSync, writeSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface QueueAttributes {
  /** Seconds a received message stays invisible. @default 30 */
  readonly VisibilityTimeout: number;
  /** Seconds a new message waits before its first delivery. @default 0 */
  readonly DelaySeconds: number;
  /** Seconds a message is kept. @default 345600 (4 days) */
  readonly MessageRetentionPeriod: number;
  /** A receive's default WaitTimeSeconds. @default 0 */
  readonly ReceiveMessageWaitTimeSeconds: number;
  readonly RedrivePolicy?: { readonly deadLetterTargetArn: string; readonly maxReceiveCount: number };
}

const DEFAULT_ATTRIBUTES: QueueAttributes = {
  VisibilityTimeout: 30,
  DelaySeconds: 0,
  MessageRetentionPeriod: 345_600,
  ReceiveMessageWaitTimeSeconds: 0,
};

export const LOCAL_ACCOUNT = '000000000000';
export const LOCAL_SQS_REGION = 'us-east-1';
export const queueArn = (name: string): string => `arn:aws:sqs:${LOCAL_SQS_REGION}:${LOCAL_ACCOUNT}:${name}`;

export class QueueError extends Error {
  /** The SQS error code, e.g. `QueueDoesNotExist`, `InvalidParameterValue`. */
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = 'QueueError';
    this.code = code;
  }
}

interface StoredMessage {
  readonly id: string;
  readonly body: string;
  readonly md5: string;
  readonly groupId: string | undefined;
  readonly sentAt: number;
  /** Epoch ms from which it can be received. */
  visibleAt: number;
  receiveCount: number;
  firstReceivedAt: number | undefined;
  /** The current receipt handle (the latest receive's). */
  receipt: string | undefined;
}

interface Queue {
  readonly name: string;
  attributes: QueueAttributes;
  /** In send order. */
  readonly messages: Map<string, StoredMessage>;
  /** Per group: the order of its last delivery (fairness). */
  readonly served: Map<string, number>;
  readonly waiters: Set<() => void>;
}

export interface ReceivedMessage {
  readonly MessageId: string;
  readonly ReceiptHandle: string;
  readonly MD5OfBody: string;
  readonly Body: string;
  readonly Attributes: Readonly<Record<string, string>>;
}

export interface QueueCounts {
  readonly visible: number;
  readonly inFlight: number;
  readonly delayed: number;
}

type JournalEntry =
  | { readonly op: 'queue'; readonly name: string; readonly attributes: QueueAttributes }
  | { readonly op: 'dropQueue'; readonly name: string }
  | {
      readonly op: 'send';
      readonly q: string;
      readonly m: Omit<StoredMessage, 'receipt' | 'firstReceivedAt'> & {
        readonly receipt?: string;
        readonly firstReceivedAt?: number;
      };
    }
  | {
      readonly op: 'recv';
      readonly q: string;
      readonly id: string;
      readonly receipt: string;
      readonly visibleAt: number;
      readonly firstReceivedAt: number;
    }
  | { readonly op: 'vis'; readonly q: string; readonly id: string; readonly visibleAt: number }
  | { readonly op: 'del'; readonly q: string; readonly id: string };

const md5 = (text: string): string => createHash('md5').update(text, 'utf8').digest('hex');

/** Limits as SQS has them. */
const MAX_DELAY_SECONDS = 900;
const MAX_VISIBILITY_SECONDS = 43_200;
const MAX_WAIT_SECONDS = 20;
const MAX_BODY_BYTES = 262_144;

const secondsIn = (name: string, value: unknown, max: number): number => {
  const n = typeof value === 'string' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > max) {
    throw new QueueError('InvalidParameterValue', `${name} must be an integer from 0 to ${max}`);
  }
  return n;
};

/** Attributes as CreateQueue/SetQueueAttributes give them (strings), checked. */
export const parseAttributes = (
  given: Readonly<Record<string, string>> | undefined,
  base: QueueAttributes = DEFAULT_ATTRIBUTES,
): QueueAttributes => {
  const out: { -readonly [K in keyof QueueAttributes]: QueueAttributes[K] } = { ...base };
  for (const [key, value] of Object.entries(given ?? {})) {
    switch (key) {
      case 'VisibilityTimeout':
        out.VisibilityTimeout = secondsIn(key, value, MAX_VISIBILITY_SECONDS);
        break;
      case 'DelaySeconds':
        out.DelaySeconds = secondsIn(key, value, MAX_DELAY_SECONDS);
        break;
      case 'MessageRetentionPeriod':
        out.MessageRetentionPeriod = secondsIn(key, value, 1_209_600);
        break;
      case 'ReceiveMessageWaitTimeSeconds':
        out.ReceiveMessageWaitTimeSeconds = secondsIn(key, value, MAX_WAIT_SECONDS);
        break;
      case 'RedrivePolicy': {
        let policy: { deadLetterTargetArn?: unknown; maxReceiveCount?: unknown };
        try {
          policy = JSON.parse(value);
        } catch {
          throw new QueueError('InvalidParameterValue', 'RedrivePolicy must be JSON');
        }
        const max = Number(policy.maxReceiveCount);
        if (typeof policy.deadLetterTargetArn !== 'string' || !Number.isInteger(max) || max < 1) {
          throw new QueueError(
            'InvalidParameterValue',
            'RedrivePolicy needs deadLetterTargetArn and a maxReceiveCount of 1 or more',
          );
        }
        out.RedrivePolicy = { deadLetterTargetArn: policy.deadLetterTargetArn, maxReceiveCount: max };
        break;
      }
      default:
        // Attributes the service does not use (SSE, policies, ...) are accepted and ignored, as
        // the cloud's are set by CDK rather than by the code.
        break;
    }
  }
  return out;
};

export interface LocalQueuesOptions {
  /** @default Date.now */
  readonly now?: () => number;
}

export interface ReceiveOptions {
  /** 1-10. @default 1 */
  readonly maxMessages?: number;
  /** Overrides the queue's VisibilityTimeout for these messages. */
  readonly visibilityTimeout?: number;
  /** Long polling. @default the queue's ReceiveMessageWaitTimeSeconds */
  readonly waitSeconds?: number;
  /** Ends a long poll early (the server closing). */
  readonly signal?: AbortSignal;
}

export type LocalQueues = Awaited<ReturnType<typeof openLocalQueues>>;

/** Opens (or creates) the queues kept under `dir`, replaying its journal. */
export const openLocalQueues = async (dir: string, options: LocalQueuesOptions = {}) => {
  const now = options.now ?? Date.now;
  await mkdir(dir, { recursive: true });
  const journalFile = join(dir, 'journal.jsonl');
  const queues = new Map<string, Queue>();
  let serveCounter = 0;
  let journalEntries = 0;
  let closed = false;

  const newQueue = (name: string, attributes: QueueAttributes): Queue => ({
    name,
    attributes,
    messages: new Map(),
    served: new Map(),
    waiters: new Set(),
  });

  const apply = (entry: JournalEntry): void => {
    switch (entry.op) {
      case 'queue': {
        const existing = queues.get(entry.name);
        if (existing) existing.attributes = entry.attributes;
        else queues.set(entry.name, newQueue(entry.name, entry.attributes));
        return;
      }
      case 'dropQueue':
        queues.delete(entry.name);
        return;
      case 'send':
        queues.get(entry.q)?.messages.set(entry.m.id, {
          ...entry.m,
          receipt: entry.m.receipt,
          firstReceivedAt: entry.m.firstReceivedAt,
        });
        return;
      case 'recv': {
        const m = queues.get(entry.q)?.messages.get(entry.id);
        if (!m) return;
        m.receiveCount += 1;
        m.receipt = entry.receipt;
        m.visibleAt = entry.visibleAt;
        m.firstReceivedAt ??= entry.firstReceivedAt;
        return;
      }
      case 'vis': {
        const m = queues.get(entry.q)?.messages.get(entry.id);
        if (m) m.visibleAt = entry.visibleAt;
        return;
      }
      case 'del':
        queues.get(entry.q)?.messages.delete(entry.id);
        return;
    }
  };

  // Replay. A line cut short (the machine lost power mid-append) ends the journal.
  const text = await readFile(journalFile, 'utf8').catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return '';
    throw e;
  });
  for (const line of text.split('\n')) {
    if (line === '') continue;
    try {
      apply(JSON.parse(line) as JournalEntry);
    } catch {
      break;
    }
  }

  /** The live state as a journal of its own: one line per queue and per message. */
  const snapshot = (): JournalEntry[] => {
    const entries: JournalEntry[] = [];
    for (const q of queues.values()) entries.push({ op: 'queue', name: q.name, attributes: q.attributes });
    for (const q of queues.values()) {
      for (const m of q.messages.values()) {
        const { receipt, firstReceivedAt, ...rest } = m;
        entries.push({
          op: 'send',
          q: q.name,
          m: {
            ...rest,
            ...(receipt ? { receipt } : {}),
            ...(firstReceivedAt ? { firstReceivedAt } : {}),
          },
        });
      }
    }
    return entries;
  };

  /**
   * Rewrites the journal as the live state: a new file, flushed, then renamed over the old. All
   * synchronous: no change can be appended to the old file between the snapshot and the rename.
   */
  const compact = (): void => {
    const entries = snapshot();
    const tmp = `${journalFile}.tmp`;
    const fd = openSync(tmp, 'w', 0o600);
    try {
      writeSync(fd, entries.map((e) => `${JSON.stringify(e)}\n`).join(''));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, journalFile);
    journalEntries = entries.length;
  };
  compact();

  const record = (entry: JournalEntry): void => {
    apply(entry);
    // Synchronous: once the caller answers, the change is in the kernel's hands (a SIGKILL keeps it).
    appendFileSync(journalFile, `${JSON.stringify(entry)}\n`, { mode: 0o600 });
    journalEntries++;
    let live = queues.size;
    for (const q of queues.values()) live += q.messages.size;
    if (journalEntries > 10_000 && journalEntries > 4 * live) {
      try {
        compact();
      } catch (e) {
        // The journal as it stands is still whole: the next change tries again.
        console.error('local queues: compacting the journal failed:', e);
      }
    }
  };

  const queueOf = (name: string): Queue => {
    const q = queues.get(name);
    if (!q) throw new QueueError('QueueDoesNotExist', `The specified queue ${name} does not exist.`);
    return q;
  };

  const wake = (q: Queue): void => {
    for (const w of [...q.waiters]) w();
  };

  const expire = (q: Queue, at: number): void => {
    const retentionMs = q.attributes.MessageRetentionPeriod * 1000;
    for (const m of q.messages.values()) {
      if (m.sentAt + retentionMs <= at) record({ op: 'del', q: q.name, id: m.id });
    }
  };

  const send = (
    name: string,
    body: string,
    options: { delaySeconds?: number | undefined; groupId?: string | undefined } = {},
  ): { id: string; md5: string } => {
    const q = queueOf(name);
    if (typeof body !== 'string' || body.length === 0) {
      throw new QueueError('MissingParameter', 'The request must contain the parameter MessageBody.');
    }
    if (Buffer.byteLength(body, 'utf8') > MAX_BODY_BYTES) {
      throw new QueueError('InvalidParameterValue', `MessageBody must be at most ${MAX_BODY_BYTES} bytes`);
    }
    const delay =
      options.delaySeconds === undefined
        ? q.attributes.DelaySeconds
        : secondsIn('DelaySeconds', options.delaySeconds, MAX_DELAY_SECONDS);
    const at = now();
    const message = {
      id: randomUUID(),
      body,
      md5: md5(body),
      groupId: options.groupId,
      sentAt: at,
      visibleAt: at + delay * 1000,
      receiveCount: 0,
    };
    record({ op: 'send', q: q.name, m: message });
    wake(q);
    return { id: message.id, md5: message.md5 };
  };

  const deadLetterQueueOf = (q: Queue): Queue | undefined => {
    const arn = q.attributes.RedrivePolicy?.deadLetterTargetArn;
    return arn ? queues.get(arn.split(':').at(-1) ?? '') : undefined;
  };

  /** Moves a message that was received too often to the dead-letter queue (a new message there, as SQS keeps its id). */
  const redrive = (q: Queue, m: StoredMessage, dlq: Queue, at: number): void => {
    record({
      op: 'send',
      q: dlq.name,
      m: {
        id: m.id,
        body: m.body,
        md5: m.md5,
        groupId: m.groupId,
        sentAt: m.sentAt,
        visibleAt: at,
        receiveCount: m.receiveCount,
      },
    });
    record({ op: 'del', q: q.name, id: m.id });
    wake(dlq);
  };

  /** What can be received now, fairly across groups: the least recently served group first. */
  const takeAvailable = (q: Queue, max: number, visibilityMs: number): ReceivedMessage[] => {
    const at = now();
    expire(q, at);
    const byGroup = new Map<string, StoredMessage[]>();
    const dlq = deadLetterQueueOf(q);
    const maxReceives = q.attributes.RedrivePolicy?.maxReceiveCount;
    for (const m of [...q.messages.values()]) {
      if (m.visibleAt > at) continue;
      if (dlq && maxReceives !== undefined && m.receiveCount >= maxReceives) {
        redrive(q, m, dlq, at);
        continue;
      }
      const group = m.groupId ?? '';
      const list = byGroup.get(group);
      if (list) list.push(m);
      else byGroup.set(group, [m]);
    }
    const groups = [...byGroup.keys()].sort((a, b) => (q.served.get(a) ?? -1) - (q.served.get(b) ?? -1));
    const picked: StoredMessage[] = [];
    let round = 0;
    while (picked.length < max) {
      let any = false;
      for (const group of groups) {
        const m = byGroup.get(group)?.[round];
        if (!m) continue;
        any = true;
        picked.push(m);
        q.served.set(group, ++serveCounter);
        if (picked.length >= max) break;
      }
      if (!any) break;
      round++;
    }
    return picked.map((m) => {
      const receipt = `${m.id}:${randomBytes(12).toString('base64url')}`;
      record({
        op: 'recv',
        q: q.name,
        id: m.id,
        receipt,
        visibleAt: at + visibilityMs,
        firstReceivedAt: m.firstReceivedAt ?? at,
      });
      return {
        MessageId: m.id,
        ReceiptHandle: receipt,
        MD5OfBody: m.md5,
        Body: m.body,
        Attributes: {
          ApproximateReceiveCount: String(m.receiveCount),
          SentTimestamp: String(m.sentAt),
          ApproximateFirstReceiveTimestamp: String(m.firstReceivedAt ?? at),
          ...(m.groupId !== undefined ? { MessageGroupId: m.groupId } : {}),
        },
      };
    });
  };

  /** Epoch ms at which the next invisible or delayed message becomes receivable, if any. */
  const nextVisible = (q: Queue): number | undefined => {
    let next: number | undefined;
    const at = now();
    for (const m of q.messages.values()) {
      if (m.visibleAt > at && (next === undefined || m.visibleAt < next)) next = m.visibleAt;
    }
    return next;
  };

  const receive = async (name: string, o: ReceiveOptions = {}): Promise<ReceivedMessage[]> => {
    const q = queueOf(name);
    const max = o.maxMessages ?? 1;
    if (!Number.isInteger(max) || max < 1 || max > 10) {
      throw new QueueError('InvalidParameterValue', 'MaxNumberOfMessages must be an integer from 1 to 10');
    }
    const visibility =
      o.visibilityTimeout === undefined
        ? q.attributes.VisibilityTimeout
        : secondsIn('VisibilityTimeout', o.visibilityTimeout, MAX_VISIBILITY_SECONDS);
    const waitSeconds =
      o.waitSeconds === undefined
        ? q.attributes.ReceiveMessageWaitTimeSeconds
        : secondsIn('WaitTimeSeconds', o.waitSeconds, MAX_WAIT_SECONDS);
    const deadline = Date.now() + waitSeconds * 1000;
    for (;;) {
      const got = takeAvailable(q, max, visibility * 1000);
      const left = deadline - Date.now();
      if (got.length > 0 || left <= 0 || closed || o.signal?.aborted) return got;
      // Wait for a send, a message made visible, or the next delayed/invisible one's time.
      const next = nextVisible(q);
      const waitMs = Math.max(1, Math.min(left, next === undefined ? left : next - now()));
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          q.waiters.delete(done);
          o.signal?.removeEventListener('abort', done);
          resolve();
        };
        const timer = setTimeout(done, waitMs);
        q.waiters.add(done);
        o.signal?.addEventListener('abort', done);
      });
    }
  };

  const inFlightMessage = (q: Queue, receipt: string): StoredMessage => {
    const id = receipt.split(':')[0] ?? '';
    const m = q.messages.get(id);
    if (!m || m.receipt !== receipt) {
      throw new QueueError('ReceiptHandleIsInvalid', `The receipt handle "${receipt}" is not valid.`);
    }
    return m;
  };

  return {
    createQueue(name: string, attributes?: Readonly<Record<string, string>>): void {
      if (!/^[\w-]{1,80}$/.test(name)) {
        throw new QueueError('InvalidParameterValue', 'A queue name is 1-80 letters, digits, - or _');
      }
      const parsed = parseAttributes(attributes);
      const existing = queues.get(name);
      if (existing) {
        // As SQS: the same name with other attributes is refused, the same ones answer the queue.
        if (attributes && JSON.stringify(existing.attributes) !== JSON.stringify(parsed)) {
          throw new QueueError('QueueAlreadyExists', `A queue named ${name} exists with other attributes`);
        }
        return;
      }
      record({ op: 'queue', name, attributes: parsed });
    },
    /** Creates the queue, or sets these attributes on it (a restart with other settings). */
    ensureQueue(name: string, attributes: Readonly<Record<string, string>>): void {
      const q = queues.get(name);
      if (!q) this.createQueue(name, attributes);
      else record({ op: 'queue', name, attributes: parseAttributes(attributes, q.attributes) });
    },
    setAttributes(name: string, attributes: Readonly<Record<string, string>>): void {
      const q = queueOf(name);
      record({ op: 'queue', name, attributes: parseAttributes(attributes, q.attributes) });
    },
    deleteQueue(name: string): void {
      const q = queueOf(name);
      record({ op: 'dropQueue', name });
      wake(q);
    },
    has: (name: string): boolean => queues.has(name),
    names: (): string[] => [...queues.keys()],
    attributes: (name: string): QueueAttributes => queueOf(name).attributes,
    counts(name: string): QueueCounts {
      const q = queueOf(name);
      const at = now();
      let visible = 0;
      let inFlight = 0;
      let delayed = 0;
      for (const m of q.messages.values()) {
        if (m.visibleAt <= at) visible++;
        else if (m.receipt !== undefined) inFlight++;
        else delayed++;
      }
      return { visible, inFlight, delayed };
    },
    /** Sent time of the oldest message (ApproximateAgeOfOldestMessage). */
    oldestSentAt(name: string): number | undefined {
      let oldest: number | undefined;
      for (const m of queueOf(name).messages.values())
        if (oldest === undefined || m.sentAt < oldest) oldest = m.sentAt;
      return oldest;
    },
    send,
    receive,
    /** Deletes the message the handle was given for (an older handle of it deletes it too, as in SQS). */
    delete(name: string, receipt: string): void {
      const q = queueOf(name);
      const id = receipt.split(':')[0] ?? '';
      if (q.messages.has(id)) record({ op: 'del', q: q.name, id });
    },
    changeVisibility(name: string, receipt: string, seconds: number): void {
      const q = queueOf(name);
      const m = inFlightMessage(q, receipt);
      const at = now();
      if (m.visibleAt <= at) {
        throw new QueueError(
          'MessageNotInflight',
          'The message is not in flight (its visibility timeout ran out).',
        );
      }
      const s = secondsIn('VisibilityTimeout', seconds, MAX_VISIBILITY_SECONDS);
      record({ op: 'vis', q: q.name, id: m.id, visibleAt: at + s * 1000 });
      if (s === 0) wake(q);
    },
    /**
     * Every message received and not deleted is visible again at once: for a queue whose consumers
     * all died (the local stack's own, killed with it), as a Lambda's timed-out invocation gives
     * its message back, without waiting out a visibility timeout set for the longest render.
     */
    returnInFlight(name: string): number {
      const q = queueOf(name);
      const at = now();
      let returned = 0;
      for (const m of q.messages.values()) {
        if (m.receipt === undefined || m.visibleAt <= at) continue;
        record({ op: 'vis', q: q.name, id: m.id, visibleAt: at });
        returned++;
      }
      if (returned > 0) wake(q);
      return returned;
    },
    purge(name: string): void {
      const q = queueOf(name);
      for (const id of [...q.messages.keys()]) record({ op: 'del', q: q.name, id });
    },
    /** Ends long polls under way; the journal needs no closing (each change was written when made). */
    async close(): Promise<void> {
      closed = true;
      for (const q of queues.values()) wake(q);
    },
  };
};
