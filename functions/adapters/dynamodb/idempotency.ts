/** The idempotency store on the single table (functions/domain/renders/idempotency.ts is its port). */

import { randomUUID } from 'node:crypto';
import {
  DeleteCommand,
  type DeleteCommandInput,
  type DynamoDBDocumentClient,
  GetCommand,
  type GetCommandInput,
  PutCommand,
  type PutCommandInput,
  UpdateCommand,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { epochSeconds } from '../../domain/common/clock.js';
import { ServiceError } from '../../domain/common/errors.js';
import type { Clock } from '../../domain/common/ports.js';
import {
  type Claim,
  IDEMPOTENCY_RETENTION_SECONDS,
  type IdempotencyStore,
  type StoredAnswer,
} from '../../domain/renders/idempotency.js';
import { isConditionFailure } from './conditional.js';
import { ENTITY, ITEM_ABSENT, idempotencyKey, TTL } from './keys.js';

const POLL_MS = 200;

/**
 * Claims `key` at `now` for `leaseMs`: only if no live item has it, or the item is a claim of the
 * same body whose lease ran out (its render died).
 */
export const claimIdempotencyParams = (
  tableName: string,
  claim: { accountId: string; key: string; hash: string; now: Date; leaseMs: number; claimId: string },
): PutCommandInput => ({
  TableName: tableName,
  Item: {
    ...idempotencyKey(claim.accountId, claim.key),
    type: ENTITY.idempotency,
    state: 'in_progress',
    body_hash: claim.hash,
    // Whose claim it is: a claim the SDK sent twice (its answer lost) meets its own item.
    claim_id: claim.claimId,
    lease_until: claim.now.getTime() + claim.leaseMs,
    [TTL]: epochSeconds(claim.now) + IDEMPOTENCY_RETENTION_SECONDS,
  },
  ConditionExpression: `${ITEM_ABSENT} OR #ttl < :now OR (#state = :progress AND lease_until < :nowMs AND body_hash = :hash)`,
  ExpressionAttributeNames: { '#state': 'state', '#ttl': TTL },
  ExpressionAttributeValues: {
    ':now': epochSeconds(claim.now),
    ':nowMs': claim.now.getTime(),
    ':progress': 'in_progress',
    ':hash': claim.hash,
  },
});

export const getIdempotencyParams = (tableName: string, accountId: string, key: string): GetCommandInput => ({
  TableName: tableName,
  Key: idempotencyKey(accountId, key),
  ConsistentRead: true,
});

export const finishIdempotencyParams = (
  tableName: string,
  accountId: string,
  key: string,
  answer: StoredAnswer,
): UpdateCommandInput => ({
  TableName: tableName,
  Key: idempotencyKey(accountId, key),
  UpdateExpression: 'SET #state = :done, answer = :answer REMOVE lease_until',
  ExpressionAttributeNames: { '#state': 'state' },
  ExpressionAttributeValues: { ':done': 'done', ':answer': answer },
});

/** Extends a claim's lease while its request renders (only while it is still in progress). */
export const renewIdempotencyParams = (
  tableName: string,
  renewal: { accountId: string; key: string; leaseUntil: number },
): UpdateCommandInput => ({
  TableName: tableName,
  Key: idempotencyKey(renewal.accountId, renewal.key),
  UpdateExpression: 'SET lease_until = :until',
  ConditionExpression: '#state = :progress',
  ExpressionAttributeNames: { '#state': 'state' },
  ExpressionAttributeValues: { ':until': renewal.leaseUntil, ':progress': 'in_progress' },
});

export const releaseIdempotencyParams = (
  tableName: string,
  accountId: string,
  key: string,
): DeleteCommandInput => ({ TableName: tableName, Key: idempotencyKey(accountId, key) });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * `leaseMs`: how long a claim holds without a renewal (its holder renews it while it renders), so
 * a twin takes over a dead request's key that soon. `maxWaitMs`: how long a twin waits for a live
 * holder's answer before giving up (the longest render). @default leaseMs + 10 s
 */
export const createIdempotencyStore = (
  db: DynamoDBDocumentClient,
  tableName: string,
  clock: Clock,
  leaseMs: number,
  maxWaitMs: number = leaseMs + 10_000,
): IdempotencyStore => {
  const tryClaim = async (accountId: string, key: string, hash: string): Promise<Claim | 'busy'> => {
    const claimId = randomUUID();
    try {
      await db.send(
        new PutCommand(
          claimIdempotencyParams(tableName, { accountId, key, hash, now: clock.now(), leaseMs, claimId }),
        ),
      );
      return { kind: 'claimed' };
    } catch (e) {
      if (!isConditionFailure(e)) throw e;
    }
    const out = await db.send(new GetCommand(getIdempotencyParams(tableName, accountId, key)));
    const item = out.Item;
    if (!item) return 'busy'; // released between our two reads: try again
    if (item.claim_id === claimId && item.state === 'in_progress') return { kind: 'claimed' };
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
    async claim(accountId, key, hash) {
      const deadline = clock.now().getTime() + maxWaitMs;
      for (;;) {
        const claim = await tryClaim(accountId, key, hash);
        if (claim !== 'busy') return claim;
        if (clock.now().getTime() > deadline) throw new Error('idempotency key stayed busy past its lease');
        await sleep(POLL_MS);
      }
    },

    async finish(accountId, key, answer) {
      await db.send(new UpdateCommand(finishIdempotencyParams(tableName, accountId, key, answer)));
    },

    async finishedAnswer(accountId, key, hash) {
      const out = await db.send(new GetCommand(getIdempotencyParams(tableName, accountId, key)));
      const item = out.Item;
      const live = item !== undefined && Number(item[TTL]) >= epochSeconds(clock.now());
      return live && item.state === 'done' && item.body_hash === hash
        ? (item.answer as StoredAnswer)
        : undefined;
    },

    async renew(accountId, key) {
      try {
        const leaseUntil = clock.now().getTime() + leaseMs;
        await db.send(new UpdateCommand(renewIdempotencyParams(tableName, { accountId, key, leaseUntil })));
        return true;
      } catch (e) {
        if (isConditionFailure(e)) return false;
        throw e;
      }
    },

    async release(accountId, key) {
      await db.send(new DeleteCommand(releaseIdempotencyParams(tableName, accountId, key)));
    },
  };
};
