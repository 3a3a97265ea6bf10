/**
 * The IdempotencyStore (domain/idempotency.ts) in memory, as the DynamoDB adapter behaves: a key
 * is claimed once per account for 24 hours (then it expires, as its TTL does); the same key with
 * another body is refused with IDEMPOTENCY_KEY_REUSED; a twin waits for the holder's answer and
 * replays it, or takes the key over once the holder's lease ran out without a renewal. Time is
 * the clock's; a waiting twin looks again every `pollMs` of real time. The contract
 * (test/contract/idempotency.contract.ts) runs the same cases against both.
 */
import { epochSeconds } from '../../domain/common/clock.js';
import { ServiceError } from '../../domain/common/errors.js';
import type { Clock } from '../../domain/common/ports.js';
import {
  IDEMPOTENCY_RETENTION_SECONDS,
  type IdempotencyStore,
  type StoredAnswer,
} from '../../domain/renders/idempotency.js';

interface Item {
  state: 'in_progress' | 'done';
  readonly hash: string;
  readonly expiresAt: number;
  leaseUntil?: number;
  answer?: StoredAnswer;
}

export interface MemoryIdempotencyOptions {
  readonly clock: Clock;
  /** How long a claim holds without a renewal. */
  readonly leaseMs: number;
  /** How long a twin waits for a live holder's answer. @default leaseMs + 10 s */
  readonly maxWaitMs?: number;
  /** @default 20 */
  readonly pollMs?: number;
}

export const createMemoryIdempotencyStore = (options: MemoryIdempotencyOptions): IdempotencyStore => {
  const { clock, leaseMs } = options;
  const maxWaitMs = options.maxWaitMs ?? leaseMs + 10_000;
  const items = new Map<string, Item>();
  const id = (accountId: string, key: string) => JSON.stringify([accountId, key]);
  const copy = (answer: StoredAnswer | undefined) => structuredClone(answer) as StoredAnswer;

  return {
    async claim(accountId, key, hash) {
      const deadline = clock.now().getTime() + maxWaitMs;
      for (;;) {
        const now = clock.now();
        const item = items.get(id(accountId, key));
        const takeable =
          !item ||
          item.expiresAt < epochSeconds(now) ||
          (item.state === 'in_progress' && (item.leaseUntil ?? 0) < now.getTime() && item.hash === hash);
        if (takeable) {
          items.set(id(accountId, key), {
            state: 'in_progress',
            hash,
            expiresAt: epochSeconds(now) + IDEMPOTENCY_RETENTION_SECONDS,
            leaseUntil: now.getTime() + leaseMs,
          });
          return { kind: 'claimed' };
        }
        if (item.hash !== hash) {
          throw new ServiceError(
            'IDEMPOTENCY_KEY_REUSED',
            'This Idempotency-Key was already used with a different request body',
            { details: [{ field: 'Idempotency-Key', issue: 'was used with a different body' }] },
          );
        }
        if (item.state === 'done') return { kind: 'replay', answer: copy(item.answer) };
        if (clock.now().getTime() > deadline) throw new Error('idempotency key stayed busy past its lease');
        await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 20));
      }
    },
    async finish(accountId, key, answer) {
      const item = items.get(id(accountId, key));
      if (!item) return;
      item.state = 'done';
      item.answer = copy(answer);
      delete item.leaseUntil;
    },
    async finishedAnswer(accountId, key, hash) {
      const item = items.get(id(accountId, key));
      const live = item !== undefined && item.expiresAt >= epochSeconds(clock.now());
      return live && item.state === 'done' && item.hash === hash ? copy(item.answer) : undefined;
    },
    async renew(accountId, key) {
      const item = items.get(id(accountId, key));
      if (item?.state !== 'in_progress') return false;
      item.leaseUntil = clock.now().getTime() + leaseMs;
      return true;
    },
    async release(accountId, key) {
      items.delete(id(accountId, key));
    },
  };
};
