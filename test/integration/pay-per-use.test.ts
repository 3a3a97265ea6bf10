/**
 * Pay per use (issue 39) over HTTP, on a stack of the file's own (a child process on its own
 * DATA_DIR): a plan with overage renders past its quota and GET /v1/usage shows the overage and the
 * estimated charge; a plan without it answers 429 PLAN_QUOTA_EXCEEDED; the usage ledger holds one
 * entry per completed job and the local usage events file one event per entry (the job id its
 * dedupe key); and `npm run admin -- usage` prints the month of the three accounts, in CSV and in
 * JSON lines, matching the ledger, against the stack running and then stopped.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { monthOf } from '../../functions/domain/common/clock.js';
import { runAdmin } from '../../lib/admin.js';
import { readUsageEvents, USAGE_EVENTS_FILE } from '../../lib/local/usage-events.js';
import { type StackProcess, startStackProcess } from '../helpers/child-stack.js';
import { createApi, createTempDataDir, type Json, putAccountOnPlan } from '../helpers/local-stack.js';
import { billedJobIds, ledgerEntries } from '../helpers/usage-ledger.js';

const PLANS = JSON.stringify({
  free: { monthlyRenders: 100, rendersPerMinute: 100 },
  metered: {
    monthlyRenders: 2,
    rendersPerMinute: 100,
    overage: { allowed: true, max_units: 2 },
    monthly_price: 10,
    unit_price_overage: 0.25,
    currency: 'EUR',
  },
  capped: { monthlyRenders: 2, rendersPerMinute: 100, monthly_price: 5, currency: 'USD' },
});

const admin = async (argv: string[], env: Record<string, string>) => {
  let stdout = '';
  let stderr = '';
  const code = await runAdmin(argv, env, {
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
    },
  });
  return { code, stdout, stderr };
};

let dataDir: string;
let stack: StackProcess | undefined;
const month = monthOf(new Date());
const accounts = { ada: 'ppu-ada', bob: 'ppu-bob', cy: 'ppu-cy' } as const;
/** Each account's completed job ids, as GET /v1/pdf lists them. */
const completed: Record<string, string[]> = {};

beforeAll(async () => {
  dataDir = await createTempDataDir();
  stack = await startStackProcess({ PLANS, SWEEP_INTERVAL_SECONDS: '1' }, 90_000, {}, dataDir);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

const live = () => stack as StackProcess;

describe.sequential('pay per use over HTTP', () => {
  it('a plan with overage renders past its quota, and GET /v1/usage shows the overage and the charge', async () => {
    await putAccountOnPlan(live(), accounts.ada, 'metered');
    const token = await live().sessionToken(accounts.ada);
    const api = createApi(live().baseUrl);
    const statuses: number[] = [];
    let refusal: Json | undefined;
    for (let i = 0; i < 5; i++) {
      const res = await api('/v1/pdf', { method: 'POST', token, body: { html: `<p>ada ${i}</p>` } });
      statuses.push(res.status);
      if (res.status !== 201) refusal = res.json;
    }
    expect(statuses).toEqual([201, 201, 201, 201, 429]);
    expect(refusal?.error.code).toBe('PLAN_QUOTA_EXCEEDED');
    expect(refusal?.error.message).toContain('and its 2 overage units used up');
    const usage = (await api('/v1/usage', { token })).json;
    expect(usage).toMatchObject({
      plan: 'metered',
      renders_used: 4,
      renders_limit: 2,
      renders_remaining: 0,
      included_units: 2,
      overage_units: 2,
      overage_limit: 2,
      estimated_charge: {
        currency: 'EUR',
        monthly_price: 10,
        unit_price_overage: 0.25,
        overage_amount: 0.5,
        total: 10.5,
      },
    });
  });

  it('a plan without overage still answers 429 at its quota', async () => {
    await putAccountOnPlan(live(), accounts.bob, 'capped');
    const token = await live().sessionToken(accounts.bob);
    const api = createApi(live().baseUrl);
    const answers = [];
    for (let i = 0; i < 3; i++)
      answers.push(await api('/v1/pdf', { method: 'POST', token, body: { html: `<p>bob ${i}</p>` } }));
    expect(answers.map((a) => a.status)).toEqual([201, 201, 429]);
    expect(answers[2]?.json.error.code).toBe('PLAN_QUOTA_EXCEEDED');
    expect((await api('/v1/usage', { token })).json).toMatchObject({
      renders_used: 2,
      overage_units: 0,
      overage_limit: 0,
      estimated_charge: { currency: 'USD', total: 5 },
    });
  });

  it('the ledger holds one entry per completed job (none for a failed one), and one usage event each', async () => {
    const token = await live().sessionToken(accounts.cy);
    const api = createApi(live().baseUrl);
    expect((await api('/v1/pdf', { method: 'POST', token, body: { html: '<p>cy</p>' } })).status).toBe(201);
    const failed = await api('/v1/pdf', {
      method: 'POST',
      token,
      body: { html: '<p>{{ x.missing }}</p>', variables: { x: {} } },
    });
    expect(failed.status).toBe(422);
    for (const sub of Object.values(accounts)) {
      const jobs: Json[] = (await api('/v1/pdf?limit=100', { token: await live().sessionToken(sub) })).json;
      completed[sub] = jobs
        .filter((j) => j.status === 'completed')
        .map((j) => j.id as string)
        .sort();
      expect(await billedJobIds(live(), sub), sub).toEqual(completed[sub]);
      const usage = (await api('/v1/usage', { token: await live().sessionToken(sub) })).json;
      expect(usage.renders_used, sub).toBe(completed[sub]?.length);
    }
    expect(completed[accounts.cy]).toHaveLength(1);
    const entry = (await ledgerEntries(live(), accounts.cy))[0];
    expect(entry).toMatchObject({ account_id: accounts.cy, month, kind: 'render', units: 1, pages: 1 });
    expect(entry?.bytes).toBeGreaterThan(0);

    // The publisher runs every sweep interval (1 s here): one event per entry, at least once.
    const all = Object.values(completed).flat().sort();
    const file = join(dataDir, USAGE_EVENTS_FILE);
    const deadline = Date.now() + 30_000;
    let keys: string[] = [];
    while (Date.now() < deadline) {
      keys = (await readUsageEvents(file)).map((e) => e.detail.dedupe_key).sort();
      if (keys.length >= all.length) break;
      await sleep(250);
    }
    expect(keys).toEqual(all);
    const events = await readUsageEvents(file);
    expect(events.every((e) => e.detail.job_id === e.detail.dedupe_key)).toBe(true);
    expect(events.find((e) => e.detail.job_id === entry?.job_id)).toEqual({
      source: 'pdf-service.usage',
      'detail-type': 'Usage Recorded',
      time: entry?.completed_at,
      detail: { version: 1, dedupe_key: entry?.job_id, ...entry },
    });
  });

  it('npm run admin -- usage prints the month of the three accounts in CSV and JSON lines, running and stopped', async () => {
    const env = { DATA_DIR: dataDir, PLANS };
    const csv = await admin(['usage', '--month', month], env);
    expect(csv.code, csv.stderr).toBe(0);
    expect(csv.stderr).toContain('3 accounts');
    const [header, ...lines] = csv.stdout.trimEnd().split('\n');
    expect(header).toBe(
      'month,account_id,plan,renders,pages,bytes,units,included_units,overage_units,currency,estimated_charge',
    );
    const jsonl = await admin(['usage', '--month', month, '--format', 'jsonl'], env);
    expect(jsonl.code, jsonl.stderr).toBe(0);
    const rows = jsonl.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Json);
    // Each row is the sum of the account's ledger entries, and agrees with its completed jobs.
    const expected = [];
    for (const sub of Object.values(accounts).sort()) {
      const entries = await ledgerEntries(live(), sub);
      expect(entries.map((e) => e.job_id).sort()).toEqual(completed[sub]);
      expected.push({
        month,
        account_id: sub,
        renders: entries.length,
        units: entries.length,
        pages: entries.reduce((n, e) => n + e.pages, 0),
        bytes: entries.reduce((n, e) => n + e.bytes, 0),
      });
    }
    expect(rows).toMatchObject(expected);
    expect(
      rows.map((r) => [r.plan, r.included_units, r.overage_units, r.currency, r.estimated_charge]),
    ).toEqual([
      ['metered', 2, 2, 'EUR', 10.5],
      ['capped', 2, 0, 'USD', 5],
      ['free', 1, 0, null, null],
    ]);
    expect(lines).toEqual(
      rows.map((r) =>
        [
          r.month,
          r.account_id,
          r.plan,
          r.renders,
          r.pages,
          r.bytes,
          r.units,
          r.included_units,
          r.overage_units,
          r.currency ?? '',
          r.estimated_charge ?? '',
        ].join(','),
      ),
    );
    expect(await admin(['usage', '--month', '2026-13'], env)).toMatchObject({ code: 2 });

    // Stopped: the same month from DATA_DIR, opened directly.
    await live().stop();
    stack = undefined;
    const stoppedCsv = await admin(['usage', '--month', month], env);
    expect(stoppedCsv.code, stoppedCsv.stderr).toBe(0);
    expect(stoppedCsv.stderr).toContain(`the local stack's table (DATA_DIR ${dataDir})`);
    expect(stoppedCsv.stdout).toBe(csv.stdout);
    expect((await admin(['usage', '--month', month, '--format', 'jsonl'], env)).stdout).toBe(jsonl.stdout);
  });
});
