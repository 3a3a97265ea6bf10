/**
 * The IdempotencyStore port's contract (domain/idempotency.ts): the same cases for the memory
 * store and the DynamoDB adapter on dynalite. Leases and retention are moved on by the clock.
 */
import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../functions/domain/common/errors.js';
import type { IdempotencyStore, StoredAnswer } from '../../functions/domain/renders/idempotency.js';
import { clockAt, type StoreBackend, unique } from './stores.js';

export interface IdempotencyOptions {
  readonly leaseMs: number;
  readonly maxWaitMs: number;
}

const ANSWER: StoredAnswer = { job_id: 'job_1', error: null };
const FAILED: StoredAnswer = {
  job_id: 'job_2',
  error: { code: 'INVALID_HTML_TEMPLATE', message: 'x', details: [{ field: 'html', issue: 'line 2' }] },
};

export const idempotencyContract = (backend: StoreBackend<IdempotencyStore, IdempotencyOptions>): void => {
  describe(`the idempotency store on ${backend.name}`, () => {
    const setup = (leaseMs = 30_000, maxWaitMs = 10_000) => {
      const clock = clockAt();
      return {
        clock,
        store: backend.create(clock, { leaseMs, maxWaitMs }),
        account: unique('acct'),
        key: unique('key'),
      };
    };

    it("claims a key once, then replays the first request's answer for the same body", async () => {
      const { store, account, key } = setup();
      expect(await store.claim(account, key, 'h1')).toEqual({ kind: 'claimed' });
      expect(await store.finishedAnswer(account, key, 'h1')).toBeUndefined();
      await store.finish(account, key, FAILED);
      expect(await store.claim(account, key, 'h1')).toEqual({ kind: 'replay', answer: FAILED });
      expect(await store.finishedAnswer(account, key, 'h1')).toEqual(FAILED);
      expect(await store.finishedAnswer(account, key, 'h2')).toBeUndefined();
      // Another account's key of the same name is its own.
      expect(await store.claim(unique('acct'), key, 'h2')).toEqual({ kind: 'claimed' });
    });

    it('refuses the same key with another body, while claimed and once finished', async () => {
      const { store, account, key } = setup();
      await store.claim(account, key, 'h1');
      const code = (p: Promise<unknown>) =>
        p.then(
          () => 'claimed',
          (e: unknown) => (e instanceof ServiceError ? e.code : e),
        );
      expect(await code(store.claim(account, key, 'h2'))).toBe('IDEMPOTENCY_KEY_REUSED');
      await store.finish(account, key, ANSWER);
      expect(await code(store.claim(account, key, 'h2'))).toBe('IDEMPOTENCY_KEY_REUSED');
    });

    it("makes a twin wait for the holder's answer and replay it", async () => {
      const { store, account, key } = setup();
      await store.claim(account, key, 'h1');
      const twin = store.claim(account, key, 'h1');
      await new Promise((r) => setTimeout(r, 50));
      await store.finish(account, key, ANSWER);
      expect(await twin).toEqual({ kind: 'replay', answer: ANSWER });
    });

    it('lets a twin take over a claim whose lease ran out unrenewed; a renewed one holds', async () => {
      const { clock, store, account, key } = setup(10_000);
      await store.claim(account, key, 'h1');
      clock.advance(8_000);
      expect(await store.renew(account, key)).toBe(true);
      clock.advance(8_000);
      // Renewed 8 s ago for 10 s: still held, so a twin waits...
      let settled = false;
      const twin = store.claim(account, key, 'h1').finally(() => {
        settled = true;
      });
      await new Promise((r) => setTimeout(r, 300));
      expect(settled).toBe(false);
      // ...until the lease runs out unrenewed: then it takes the key over.
      clock.advance(3_000);
      expect(await twin).toEqual({ kind: 'claimed' });
      await store.finish(account, key, ANSWER);
      expect(await store.renew(account, key)).toBe(false);
    });

    it('gives a twin up once it has waited its bound for a live holder', async () => {
      const { clock, store, account, key } = setup(60_000, 1_000);
      await store.claim(account, key, 'h1');
      const twin = store.claim(account, key, 'h1');
      await new Promise((r) => setTimeout(r, 50));
      clock.advance(2_000);
      await expect(twin).rejects.toThrow();
    });

    it('forgets a released claim, so that a retry claims it afresh', async () => {
      const { store, account, key } = setup();
      await store.claim(account, key, 'h1');
      await store.release(account, key);
      expect(await store.renew(account, key)).toBe(false);
      expect(await store.claim(account, key, 'h2')).toEqual({ kind: 'claimed' });
    });

    it('keeps a key 24 hours: then it replays nothing and is claimed afresh, with any body', async () => {
      const { clock, store, account, key } = setup();
      await store.claim(account, key, 'h1');
      await store.finish(account, key, ANSWER);
      clock.advance(23 * 3600_000);
      expect(await store.finishedAnswer(account, key, 'h1')).toEqual(ANSWER);
      clock.advance(1 * 3600_000 + 2000);
      expect(await store.finishedAnswer(account, key, 'h1')).toBeUndefined();
      expect(await store.claim(account, key, 'h2')).toEqual({ kind: 'claimed' });
    });
  });
};
