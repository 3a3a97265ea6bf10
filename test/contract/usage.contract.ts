/**
 * The UsageStore port's contract (domain/usage.ts): the same cases for the memory store and the
 * DynamoDB adapter on dynalite. Minutes and months are the test clock's.
 */
import { describe, expect, it } from 'vitest';
import type { UsageStore } from '../../functions/domain/accounts/usage.js';
import { ServiceError } from '../../functions/domain/common/errors.js';
import type { Plan } from '../../functions/settings.js';
import { clockAt, type StoreBackend, unique } from './stores.js';

const PLAN: Plan = { monthlyRenders: 3, rendersPerMinute: 2, concurrentRenders: 2 };
const MONTH = '2026-11';

const refusal = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (e) {
    if (e instanceof ServiceError) return { code: e.code, retryAfterSeconds: e.retryAfterSeconds };
    throw e;
  }
  return undefined;
};

export const usageContract = (backend: StoreBackend<UsageStore>): void => {
  describe(`the usage store on ${backend.name}`, () => {
    const setup = (at = '2026-11-28T10:00:15.000Z') => {
      const clock = clockAt(at);
      return { clock, usage: backend.create(clock, {}), account: unique('acct') };
    };

    it('counts render requests per minute, refusing past the plan’s rate; template writes apart', async () => {
      const { usage, account, clock } = setup();
      expect(await usage.readRateLimit(account, PLAN)).toEqual({ limit: 2, remaining: 2, resetSeconds: 45 });
      expect(await usage.hitRateLimit(account, PLAN)).toEqual({ limit: 2, remaining: 1, resetSeconds: 45 });
      expect(await usage.hitRateLimit(account, PLAN)).toMatchObject({ remaining: 0 });
      expect(await refusal(usage.hitRateLimit(account, PLAN))).toEqual({
        code: 'USAGE_LIMIT_EXCEEDED',
        retryAfterSeconds: 45,
      });
      expect(await usage.readRateLimit(account, PLAN)).toMatchObject({ remaining: 0 });
      expect(await usage.hitTemplateWriteLimit(account, 1)).toMatchObject({ limit: 1, remaining: 0 });
      expect((await refusal(usage.hitTemplateWriteLimit(account, 1)))?.code).toBe('USAGE_LIMIT_EXCEEDED');
      clock.advance(45_000);
      expect(await usage.hitRateLimit(account, PLAN)).toEqual({ limit: 2, remaining: 1, resetSeconds: 60 });
    });

    it('holds a unit and a running render per job, once however often asked, refused by quota then concurrency', async () => {
      const { usage, account } = setup();
      expect(await usage.reserveRender(account, PLAN, undefined, 'job_a')).toBe(MONTH);
      expect(await usage.reserveRender(account, PLAN, MONTH, 'job_a')).toBe(MONTH);
      await usage.reserveRender(account, PLAN, MONTH, 'job_b');
      expect(await usage.readUnits(account, MONTH)).toEqual({ rendersUsed: 2, inFlight: 2 });
      expect(await refusal(usage.reserveRender(account, PLAN, MONTH, 'job_c'))).toEqual({
        code: 'CONCURRENCY_LIMIT_EXCEEDED',
        retryAfterSeconds: 2,
      });
      expect((await refusal(usage.checkReservable(account, PLAN, MONTH)))?.code).toBe(
        'CONCURRENCY_LIMIT_EXCEEDED',
      );
      await usage.recordRender(account, MONTH, 1000, 40, 'job_a');
      await usage.recordRender(account, MONTH, 1000, 40, 'job_a'); // sent twice: recorded once
      await usage.releaseRender(account, MONTH, 'job_b');
      await usage.releaseRender(account, MONTH, 'job_b');
      expect(await usage.readUnits(account, MONTH)).toEqual({ rendersUsed: 1, inFlight: 0 });
      expect(await usage.readMonth(account, MONTH)).toEqual({ rendersUsed: 1, pdfBytes: 1000, renderMs: 40 });
      await usage.reserveRender(account, PLAN, MONTH, 'job_c');
      await usage.recordRender(account, MONTH, 500, 10, 'job_c');
      await usage.reserveRender(account, PLAN, MONTH, 'job_d');
      const quota = await refusal(usage.reserveRender(account, PLAN, MONTH, 'job_e'));
      expect(quota?.code).toBe('PLAN_QUOTA_EXCEEDED');
      // Until the month's end: 2026-12-01T00:00:00Z.
      expect(quota?.retryAfterSeconds).toBe(
        Math.ceil((Date.parse('2026-12-01T00:00:00.000Z') - Date.parse('2026-11-28T10:00:15.000Z')) / 1000),
      );
      expect((await refusal(usage.checkReservable(account, PLAN, MONTH)))?.code).toBe('PLAN_QUOTA_EXCEEDED');
      // A month of its own.
      expect(await usage.readMonth(account, '2026-12')).toEqual({ rendersUsed: 0, pdfBytes: 0, renderMs: 0 });
    });

    it('counts webhook sends on request per endpoint and per account, each window apart', async () => {
      const { usage, account, clock } = setup();
      const limits = { endpoint: 2, account: 3 };
      await usage.hitWebhookSendLimit(account, 'wh_a', limits);
      await usage.hitWebhookSendLimit(account, 'wh_a', limits);
      expect(await refusal(usage.hitWebhookSendLimit(account, 'wh_a', limits))).toEqual({
        code: 'USAGE_LIMIT_EXCEEDED',
        retryAfterSeconds: 45,
      });
      // Another endpoint has a window of its own, but the account's is shared (the refused send
      // above was counted in the endpoint's window only).
      await usage.hitWebhookSendLimit(account, 'wh_b', limits);
      expect((await refusal(usage.hitWebhookSendLimit(account, 'wh_c', limits)))?.code).toBe(
        'USAGE_LIMIT_EXCEEDED',
      );
      // Renders' own window is untouched, and another account is not held back.
      expect(await usage.readRateLimit(account, PLAN)).toMatchObject({ remaining: 2 });
      await usage.hitWebhookSendLimit(unique('acct'), 'wh_a', limits);
      clock.advance(45_000);
      await usage.hitWebhookSendLimit(account, 'wh_a', limits);
    });

    it('counts windows apart from renders per minute or per UTC day, per account and per client address', async () => {
      const { usage, account, clock } = setup();
      const other = unique('acct');
      expect(await usage.hitWindow({ accountId: account }, 'previews', 2, 'previews')).toEqual({
        limit: 2,
        remaining: 1,
        resetSeconds: 45,
      });
      await usage.hitWindow({ accountId: account }, 'previews', 2, 'previews');
      const refused = await refusal(usage.hitWindow({ accountId: account }, 'previews', 2, 'previews'));
      expect(refused).toEqual({ code: 'USAGE_LIMIT_EXCEEDED', retryAfterSeconds: 45 });
      // The day's window: until 2026-11-29T00:00:00Z.
      const day = Math.ceil(
        (Date.parse('2026-11-29T00:00:00.000Z') - Date.parse('2026-11-28T10:00:15.000Z')) / 1000,
      );
      expect(await usage.hitWindow({ accountId: account }, 'previews_day', 1, 'previews')).toEqual({
        limit: 1,
        remaining: 0,
        resetSeconds: day,
      });
      expect(await refusal(usage.hitWindow({ accountId: account }, 'previews_day', 1, 'previews'))).toEqual({
        code: 'USAGE_LIMIT_EXCEEDED',
        retryAfterSeconds: day,
      });
      // Apart: another window, another account, a client address, renders' own window.
      await usage.hitWindow({ accountId: account }, 'refused', 1, 'refused requests');
      await usage.hitWindow({ accountId: other }, 'previews', 2, 'previews');
      await usage.hitWindow({ ip: '203.0.113.7' }, 'refused', 1, 'refused requests');
      expect((await refusal(usage.hitWindow({ ip: '203.0.113.7' }, 'refused', 1, 'x')))?.code).toBe(
        'USAGE_LIMIT_EXCEEDED',
      );
      expect(await usage.readRateLimit(account, PLAN)).toMatchObject({ remaining: 2 });
      // The next minute's window is fresh; the day's is not.
      clock.advance(45_000);
      await usage.hitWindow({ accountId: account }, 'previews', 2, 'previews');
      expect((await refusal(usage.hitWindow({ accountId: account }, 'previews_day', 1, 'x')))?.code).toBe(
        'USAGE_LIMIT_EXCEEDED',
      );
    });

    it('holds a fresh month to the plan as any other: a plan of 0 renders or 0 a minute refuses the first', async () => {
      const { usage, account } = setup();
      const none: Plan = { monthlyRenders: 0, rendersPerMinute: 0, concurrentRenders: 1 };
      expect((await refusal(usage.hitRateLimit(account, none)))?.code).toBe('USAGE_LIMIT_EXCEEDED');
      expect((await refusal(usage.hitTemplateWriteLimit(account, 0)))?.code).toBe('USAGE_LIMIT_EXCEEDED');
      expect((await refusal(usage.reserveRender(account, none, MONTH, 'job_0')))?.code).toBe(
        'PLAN_QUOTA_EXCEEDED',
      );
      expect((await refusal(usage.reserveQueued(account, none, MONTH, 'job_0')))?.code).toBe(
        'PLAN_QUOTA_EXCEEDED',
      );
      expect(await usage.readMonth(account, MONTH)).toMatchObject({ rendersUsed: 0 });
    });

    it('holds an async render’s unit against the quota and the queue depth, not the concurrency (issue 37)', async () => {
      const { usage, account } = setup();
      const plan: Plan = { monthlyRenders: 4, rendersPerMinute: 2, concurrentRenders: 1, queuedRenders: 2 };
      await usage.reserveRender(account, plan, MONTH, 'job_sync');
      expect(await usage.reserveAsync(account, plan, MONTH, 'job_a1')).toBe(MONTH);
      expect(await usage.reserveAsync(account, plan, MONTH, 'job_a1')).toBe(MONTH);
      expect(await usage.reserveAsync(account, plan, MONTH, 'job_a2')).toBe(MONTH);
      expect(await usage.readUnits(account, MONTH)).toEqual({ rendersUsed: 3, inFlight: 1 });
      expect(await refusal(usage.reserveAsync(account, plan, MONTH, 'job_a3'))).toEqual({
        code: 'QUEUE_DEPTH_EXCEEDED',
        retryAfterSeconds: 5,
      });
      // One ends (given back, or recorded): its place is free again.
      await usage.releaseRender(account, MONTH, 'job_a1');
      expect(await usage.readUnits(account, MONTH)).toEqual({ rendersUsed: 2, inFlight: 1 });
      expect(await usage.reserveAsync(account, plan, MONTH, 'job_a3')).toBe(MONTH);
      await usage.recordRender(account, MONTH, 5, 2, 'job_a2');
      expect(await usage.reserveAsync(account, plan, MONTH, 'job_a4')).toBe(MONTH);
      expect(await usage.readUnits(account, MONTH)).toEqual({ rendersUsed: 4, inFlight: 1 });
      // The quota's refusal wins.
      expect((await refusal(usage.reserveAsync(account, plan, MONTH, 'job_a5')))?.code).toBe(
        'PLAN_QUOTA_EXCEEDED',
      );
      // A queued render's check leaves the concurrency out.
      const other = unique('acct');
      await usage.reserveRender(other, plan, MONTH, 'job_s');
      expect((await refusal(usage.checkReservable(other, plan, MONTH)))?.code).toBe(
        'CONCURRENCY_LIMIT_EXCEEDED',
      );
      expect(await usage.checkReservable(other, plan, MONTH, undefined, false)).toBeUndefined();
    });

    it('holds a queued job’s unit against the quota only', async () => {
      const { usage, account } = setup();
      await usage.reserveRender(account, PLAN, MONTH, 'job_r1');
      await usage.reserveRender(account, PLAN, MONTH, 'job_r2');
      expect(await usage.reserveQueued(account, PLAN, MONTH, 'job_q')).toBe(MONTH);
      expect(await usage.reserveQueued(account, PLAN, MONTH, 'job_q')).toBe(MONTH);
      expect(await usage.readUnits(account, MONTH)).toEqual({ rendersUsed: 3, inFlight: 2 });
      expect((await refusal(usage.reserveQueued(account, PLAN, MONTH, 'job_q2')))?.code).toBe(
        'PLAN_QUOTA_EXCEEDED',
      );
      await usage.recordRender(account, MONTH, 7, 3, 'job_q');
      expect(await usage.readUnits(account, MONTH)).toEqual({ rendersUsed: 3, inFlight: 2 });
      await usage.releaseRender(account, MONTH, 'job_r1');
      expect(await usage.readUnits(account, MONTH)).toEqual({ rendersUsed: 2, inFlight: 1 });
      expect(await usage.readMonth(account, MONTH)).toMatchObject({ pdfBytes: 7, renderMs: 3 });
    });

    it('records and releases a unit once wherever it is held, whatever the caller guessed', async () => {
      const { usage, account } = setup();
      const plan: Plan = { ...PLAN, monthlyRenders: 10, concurrentRenders: 5 };
      await usage.reserveRender(account, plan, MONTH, 'job_run');
      await usage.reserveQueued(account, plan, MONTH, 'job_item');
      await usage.reserveAsync(account, plan, MONTH, 'job_async');
      await usage.reserveQueued(account, plan, MONTH, 'job_gone');
      expect(await usage.readUnits(account, MONTH)).toEqual({ rendersUsed: 4, inFlight: 1 });
      // Guessed right, guessed wrong, not guessed: each counted once, sent twice.
      for (let twice = 0; twice < 2; twice++) {
        await usage.recordRender(account, MONTH, 100, 10, 'job_item', 'queued');
        await usage.recordRender(account, MONTH, 20, 2, 'job_run', 'queued');
        await usage.recordRender(account, MONTH, 3, 1, 'job_async');
        await usage.releaseRender(account, MONTH, 'job_gone', 'running');
      }
      expect(await usage.readUnits(account, MONTH)).toEqual({ rendersUsed: 3, inFlight: 0 });
      expect(await usage.readMonth(account, MONTH)).toEqual({ rendersUsed: 3, pdfBytes: 123, renderMs: 13 });
    });

    it('trusts counters read a moment earlier only when they allow a reservation', async () => {
      const { usage, account } = setup();
      await expect(
        usage.checkReservable(account, PLAN, MONTH, { rendersUsed: 0, inFlight: 0 }),
      ).resolves.toBeUndefined();
      // Seen full, but nothing is held now: a fresh read allows it.
      await expect(
        usage.checkReservable(account, PLAN, MONTH, { rendersUsed: 3, inFlight: 2 }),
      ).resolves.toBeUndefined();
    });

    it('sets the counters and their holders only from what was read', async () => {
      const { usage, account } = setup();
      expect(await usage.readUnits(account, MONTH)).toEqual({ rendersUsed: undefined, inFlight: undefined });
      expect(
        await usage.setUnits(
          account,
          MONTH,
          { rendersUsed: 1, inFlight: 0 },
          { rendersUsed: 2, inFlight: 1 },
        ),
      ).toBe(false);
      expect(
        await usage.setUnits(
          account,
          MONTH,
          {},
          { rendersUsed: 2, inFlight: 1 },
          ['job_live'],
          ['job_queued'],
        ),
      ).toBe(true);
      expect(await usage.readUnits(account, MONTH)).toEqual({ rendersUsed: 2, inFlight: 1 });
      expect(await usage.setUnits(account, MONTH, {}, { rendersUsed: 0, inFlight: 0 })).toBe(false);
      // The holders set are the ones whose moves now count.
      await usage.recordRender(account, MONTH, 10, 1, 'job_live');
      await usage.releaseRender(account, MONTH, 'job_queued');
      await usage.releaseRender(account, MONTH, 'job_unknown');
      expect(await usage.readUnits(account, MONTH)).toEqual({ rendersUsed: 1, inFlight: 0 });
    });
  });
};
