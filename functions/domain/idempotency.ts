/**
 * Idempotent renders (contract extension): within 24 hours, the same Idempotency-Key from the
 * same account with the same body gets the first request's answer without rendering or counting
 * again; concurrent duplicates render once (the first claims the key, the others wait for it).
 * A claim carries a lease, so a render whose process died does not hold its key for ever.
 */
import { createHash } from 'node:crypto';
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import stringify from 'safe-stable-stringify';
import { epochSeconds } from './clock.js';
import { type ErrorDetail, ServiceError } from './errors.js';
import { ENTITY, ITEM_ABSENT, idempotencyKey, TTL } from './keys.js';
import type { Clock, Diagnostics } from './ports.js';

const RETENTION_SECONDS = 24 * 3600;
const POLL_MS = 200;

/** 1-255 printable ASCII characters. */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

export const checkIdempotencyKey = (key: string | undefined): string | undefined => {
  if (key === undefined) return undefined;
  if (!IDEMPOTENCY_KEY_PATTERN.test(key)) {
    const issue = 'must be 1-255 printable ASCII characters';
    throw new ServiceError('VALIDATION_ERROR', `Idempotency-Key header ${issue}`, {
      details: [{ field: 'Idempotency-Key', issue }],
    });
  }
  return key;
};

/** The same body, whatever its key order or spacing, hashes the same. */
export const bodyHash = (body: unknown): string =>
  createHash('sha256')
    .update(stringify(body) ?? '')
    .digest('hex');

/** What is replayed: the job to show (with a fresh link), or the error (with its job, if any). */
export interface StoredAnswer {
  readonly job_id: string | null;
  readonly error: {
    readonly code: string;
    readonly message: string;
    readonly details?: readonly ErrorDetail[];
    readonly diagnostics?: Diagnostics;
  } | null;
}

export type Claim = { readonly kind: 'claimed' } | { readonly kind: 'replay'; readonly answer: StoredAnswer };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export const createIdempotencyStore = (
  db: DynamoDBDocumentClient,
  tableName: string,
  clock: Clock,
  leaseMs: number,
) => {
  const tryClaim = async (accountId: string, key: string, hash: string): Promise<Claim | 'busy'> => {
    const now = clock.now();
    try {
      await db.send(
        new PutCommand({
          TableName: tableName,
          Item: {
            ...idempotencyKey(accountId, key),
            type: ENTITY.idempotency,
            state: 'in_progress',
            body_hash: hash,
            lease_until: now.getTime() + leaseMs,
            [TTL]: epochSeconds(now) + RETENTION_SECONDS,
          },
          ConditionExpression: `${ITEM_ABSENT} OR #ttl < :now OR (#state = :progress AND lease_until < :nowMs AND body_hash = :hash)`,
          ExpressionAttributeNames: { '#state': 'state', '#ttl': TTL },
          ExpressionAttributeValues: {
            ':now': epochSeconds(now),
            ':nowMs': now.getTime(),
            ':progress': 'in_progress',
            ':hash': hash,
          },
        }),
      );
      return { kind: 'claimed' };
    } catch (e) {
      if ((e as Error).name !== 'ConditionalCheckFailedException') throw e;
    }
    const out = await db.send(
      new GetCommand({ TableName: tableName, Key: idempotencyKey(accountId, key), ConsistentRead: true }),
    );
    const item = out.Item;
    if (!item) return 'busy'; // released between our two reads: try again
    if (item.body_hash !== hash) {
      throw new ServiceError(
        'IDEMPOTENCY_KEY_REUSED',
        'This Idempotency-Key was already used with a different request body',
        { details: [{ field: 'Idempotency-Key', issue: 'was used with a different body' }] },
      );
    }
    if (item.state === 'done') return { kind: 'replay', answer: item.answer as StoredAnswer };
    return 'busy';
  };

  return {
    /** Claim the key for this request, or get the answer to replay (waiting while a twin renders). */
    async claim(accountId: string, key: string, hash: string): Promise<Claim> {
      const deadline = clock.now().getTime() + leaseMs + 10_000;
      for (;;) {
        const claim = await tryClaim(accountId, key, hash);
        if (claim !== 'busy') return claim;
        if (clock.now().getTime() > deadline) throw new Error('idempotency key stayed busy past its lease');
        await sleep(POLL_MS);
      }
    },

    async finish(accountId: string, key: string, answer: StoredAnswer): Promise<void> {
      await db.send(
        new UpdateCommand({
          TableName: tableName,
          Key: idempotencyKey(accountId, key),
          UpdateExpression: 'SET #state = :done, answer = :answer REMOVE lease_until',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: { ':done': 'done', ':answer': answer },
        }),
      );
    },

    /** The answer a request with this key and body would replay now, if there is one. Reads only. */
    async finishedAnswer(accountId: string, key: string, hash: string): Promise<StoredAnswer | undefined> {
      const out = await db.send(
        new GetCommand({ TableName: tableName, Key: idempotencyKey(accountId, key), ConsistentRead: true }),
      );
      const item = out.Item;
      const live = item !== undefined && Number(item[TTL]) >= epochSeconds(clock.now());
      return live && item.state === 'done' && item.body_hash === hash
        ? (item.answer as StoredAnswer)
        : undefined;
    },

    /** Forget a claim whose request ended in a fault of ours, so that a retry can render. */
    async release(accountId: string, key: string): Promise<void> {
      await db.send(new DeleteCommand({ TableName: tableName, Key: idempotencyKey(accountId, key) }));
    },
  };
};

export type IdempotencyStore = ReturnType<typeof createIdempotencyStore>;
