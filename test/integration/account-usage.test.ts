/**
 * /v1/me, /v1/usage and the admin command over the real local stack: the contract's shapes,
 * usage figures that agree with the jobs (completed, failed and idempotently replayed renders),
 * reading usage counting against nothing, and a plan change by the admin command applying on
 * the account's very next request.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import dynalite from 'dynalite';
import { describe, expect, it } from 'vitest';
import { createAccountStore } from '../../functions/adapters/dynamodb/accounts.js';
import { minuteOf } from '../../functions/domain/common/clock.js';
import { runAdmin } from '../../lib/admin.js';
import { closeServer, listen } from '../../lib/local/http-server.js';
import { LOCAL_CREDENTIALS, LOCAL_TABLE_NAME } from '../../lib/local/stack.js';
import { ensureTable } from '../../lib/local/table.js';
import { createTempDataDir, type Json, putAccountOnPlan, useLocalStack } from '../helpers/local-stack.js';

const local = useLocalStack();

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** Runs the admin command in this process, as bin/admin.ts does. */
const admin = async (argv: string[], env: Record<string, string> = {}) => {
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
  return { code, stdout, stderr, json: stdout ? (JSON.parse(stdout) as Json) : undefined };
};

const newSub = (label: string) => `${label}-${Math.random().toString(36).slice(2, 10)}`;

describe('GET /v1/me', () => {
  it('answers the account: id, email, plan, created_at; keys are refused', async () => {
    const sub = newSub('me');
    const token = await local.sessionToken(sub, { email: 'Me@Example.com' });
    const res = await local.api('/v1/me', { token });
    expect(res.status, res.text).toBe(200);
    expect(Object.keys(res.json)).toEqual(['id', 'email', 'plan', 'created_at']);
    expect(res.json).toMatchObject({ id: sub, email: 'Me@Example.com', plan: 'free' });
    expect(res.json.created_at).toMatch(ISO);
    expect((await local.api('/v1/me', { token })).json).toEqual(res.json);

    const { key } = (await local.api('/v1/api-keys', { method: 'POST', token, body: { name: 'x' } })).json;
    const refused = await local.api('/v1/me', { token: key });
    expect(refused.status).toBe(403);
    expect(refused.json.error.code).toBe('SESSION_REQUIRED');
  });
});

describe('GET /v1/usage', () => {
  it('answers the contract’s shape, the same for a key and a session', async () => {
    const token = await local.sessionToken();
    const res = await local.api('/v1/usage', { token });
    expect(res.status, res.text).toBe(200);
    const now = new Date();
    const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString();
    const end = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString();
    expect(res.json).toEqual({
      plan: 'free',
      period_start: start,
      period_end: end,
      renders_used: 0,
      renders_limit: 100,
      renders_remaining: 100,
      rate_limit: { limit: 10, window_seconds: 60, remaining: 10 },
      pdf_bytes: 0,
      render_ms: 0,
      included_units: 0,
      overage_units: 0,
      overage_limit: 0,
      estimated_charge: null,
    });
    const { key } = (await local.api('/v1/api-keys', { method: 'POST', token, body: { name: 'x' } })).json;
    expect((await local.api('/v1/usage', { token: key })).json).toEqual(res.json);
  });

  it('agrees with the jobs after completed, failed and replayed renders; reading it counts nothing', async () => {
    const sub = newSub('usage');
    await putAccountOnPlan(local.stack, sub, 'starter');
    const token = await local.sessionToken(sub);
    const render = (body: Json, headers: Record<string, string> = {}) =>
      local.api('/v1/pdf', { method: 'POST', token, body, headers });

    const minuteOfFirstRender = minuteOf(new Date());
    expect((await render({ html: '<p>one</p>' })).status).toBe(201);
    expect((await render({ html: '<h1>two</h1><p>{{ n }}</p>', variables: { n: 2 } })).status).toBe(201);
    // Only running the template finds the missing attribute: the job fails, its unit comes back.
    const failed = await render({ html: '<p>{{ x.missing }}</p>', variables: { x: {} } });
    expect(failed.status, failed.text).toBe(422);
    expect(failed.json.error.job_id).toMatch(/^job_/);
    const once = { html: '<p>only once</p>' };
    const first = await render(once, { 'Idempotency-Key': 'usage-test-1' });
    const replayed = await render(once, { 'Idempotency-Key': 'usage-test-1' });
    expect(replayed.json.id).toBe(first.json.id);
    const minuteOfLastRender = minuteOf(new Date());
    const lastRemaining = Number(replayed.headers.get('ratelimit-remaining'));

    const jobs: Json[] = (await local.api('/v1/pdf', { token })).json;
    expect(jobs.map((j) => j.status).sort()).toEqual(['completed', 'completed', 'completed', 'failed']);
    const completed = jobs.filter((j) => j.status === 'completed');
    const sum = (field: string) => completed.reduce((total, j) => total + j[field], 0);

    const reads = [];
    for (let i = 0; i < 3; i++) reads.push((await local.api('/v1/usage', { token })).json);
    const sameMinute = minuteOf(new Date()) === minuteOfLastRender;
    for (const usage of reads) {
      expect(usage).toMatchObject({
        plan: 'starter',
        renders_used: completed.length,
        renders_limit: 2000,
        renders_remaining: 2000 - completed.length,
        pdf_bytes: sum('file_size_bytes'),
        render_ms: sum('render_duration_ms'),
      });
      expect(usage.pdf_bytes).toBeGreaterThan(0);
      // The window as the last render answer left it: reading usage counts nothing.
      expect(usage.rate_limit).toEqual({
        limit: 60,
        window_seconds: 60,
        remaining: sameMinute ? lastRemaining : 60,
      });
    }
    // Four renders counted in this window at most (a replay renders nothing and only reads it).
    if (sameMinute && minuteOfFirstRender === minuteOfLastRender) expect(lastRemaining).toBe(56);
  });
});

describe('the admin command against the local stack', () => {
  const env = () => ({ DATA_DIR: local.stack.dataDir });

  it('moves an account to another plan, which applies on its very next request', async () => {
    const sub = newSub('admin');
    const token = await local.sessionToken(sub, { email: `${sub}@example.com` });
    expect((await local.api('/v1/me', { token })).json.plan).toBe('free');
    expect((await local.api('/v1/usage', { token })).json.renders_limit).toBe(100);

    const changed = await admin(['set-plan', '--account', sub, '--plan', 'pro'], env());
    expect(changed.code, changed.stderr).toBe(0);
    expect(changed.json).toMatchObject({ id: sub, plan: 'pro', email: `${sub}@example.com` });
    expect(changed.stderr).toContain('plan free → pro');

    expect((await local.api('/v1/me', { token })).json.plan).toBe('pro');
    expect((await local.api('/v1/usage', { token })).json).toMatchObject({
      plan: 'pro',
      renders_limit: 25000,
      rate_limit: { limit: 300 },
    });
    const render = await local.api('/v1/pdf', { method: 'POST', token, body: { html: '<p>pro</p>' } });
    expect(render.headers.get('ratelimit-limit')).toBe('300');

    expect((await admin(['get', '--account', sub], env())).json).toMatchObject({ id: sub, plan: 'pro' });
  });

  it('finds accounts by email, case-insensitively', async () => {
    const sub = newSub('finder');
    await local.api('/v1/me', { token: await local.sessionToken(sub, { email: `${sub}@Example.com` }) });
    const found = await admin(['find', '--email', `${sub.toUpperCase()}@EXAMPLE.COM`], env());
    expect(found.code, found.stderr).toBe(0);
    expect(found.json).toEqual([
      { id: sub, email: `${sub}@Example.com`, plan: 'free', created_at: expect.stringMatching(ISO) },
    ]);
    const none = await admin(['find', '--email', 'nobody@example.com'], env());
    expect(none).toMatchObject({ code: 1, stdout: '' });
    expect(none.stderr).toContain('no account with email nobody@example.com');
  });

  it('refuses unknown plans, unknown accounts and bad arguments, changing nothing', async () => {
    const sub = newSub('refused');
    await local.api('/v1/me', { token: await local.sessionToken(sub) });
    const unknownPlan = await admin(['set-plan', '--account', sub, '--plan', 'platinum'], env());
    expect(unknownPlan.code).toBe(1);
    expect(unknownPlan.stderr).toContain(
      'unknown plan "platinum"; the plans (from the default plans): free, starter, pro',
    );
    const noAccount = await admin(['set-plan', '--account', 'acct-nobody', '--plan', 'pro'], env());
    expect(noAccount.code).toBe(1);
    expect(noAccount.stderr).toContain('no account "acct-nobody"');
    for (const argv of [[], ['set-plan', '--account', sub], ['find'], ['nope'], ['get', '--acount', sub]]) {
      const bad = await admin(argv, env());
      expect(bad.code, argv.join(' ')).toBe(2);
      expect(bad.stderr).toContain('usage: npm run --silent admin');
    }
    expect((await admin(['get', '--account', sub], env())).json.plan).toBe('free');
    const withPlans = await admin(['set-plan', '--account', sub, '--plan', 'team'], {
      ...env(),
      PLANS:
        '{"free":{"monthlyRenders":1,"rendersPerMinute":1},"team":{"monthlyRenders":9,"rendersPerMinute":9}}',
    });
    expect(withPlans.code, withPlans.stderr).toBe(0);
  });

  // No bound of its own on the command's time (a first call builds the bundle): the test's timeout
  // is the only one.
  it('runs as npm run admin, printing only JSON on stdout', { timeout: 180_000 }, async () => {
    const sub = newSub('cli');
    await local.api('/v1/me', { token: await local.sessionToken(sub, { email: `${sub}@example.com` }) });
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['bin/admin.mjs', 'find', '--email', `${sub}@example.com`],
      { env: { ...process.env, DATA_DIR: local.stack.dataDir }, timeout: 170_000 },
    );
    expect(JSON.parse(stdout)).toMatchObject([{ id: sub }]);
  });
});

describe('the admin command without a running stack', () => {
  it('opens DATA_DIR’s table itself, holding the stack’s lock while it does', async () => {
    const dataDir = await createTempDataDir();
    try {
      const server = dynalite({ path: join(dataDir, 'dynamodb'), createTableMs: 0 }) as Server;
      const { port } = await listen(server, 0, '127.0.0.1');
      const client = new DynamoDBClient({
        region: 'us-east-1',
        endpoint: `http://127.0.0.1:${port}`,
        credentials: LOCAL_CREDENTIALS,
      });
      await ensureTable(client, LOCAL_TABLE_NAME, dataDir);
      await createAccountStore(DynamoDBDocumentClient.from(client), LOCAL_TABLE_NAME, {
        now: () => new Date(),
      }).ensure('acct-offline', 'offline@example.com');
      client.destroy();
      await closeServer(server, 1000);

      const changed = await admin(['set-plan', '--account', 'acct-offline', '--plan', 'starter'], {
        DATA_DIR: dataDir,
      });
      expect(changed.code, changed.stderr).toBe(0);
      expect(changed.json.plan).toBe('starter');
      expect(
        (await admin(['find', '--email', 'offline@example.com'], { DATA_DIR: dataDir })).json,
      ).toMatchObject([{ id: 'acct-offline', plan: 'starter' }]);
      expect(existsSync(join(dataDir, 'local-stack.pid'))).toBe(false);
      expect(
        (await admin(['get', '--account', 'x'], { DATA_DIR: join(dataDir, 'missing') })).stderr,
      ).toContain('no local data');
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
