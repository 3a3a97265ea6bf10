/**
 * Faults of the parts around a render, injected for real: DynamoDB throttling and hanging calls
 * through a proxy in front of dynalite, and a renderer Lambda that times out through an endpoint
 * that answers Invoke as Lambda does. Each fault answers with a named error, leaves no job
 * pending, gives the quota unit back, and the next request succeeds. (Storage failing after the
 * PDF was made: pdf-storage-failure.test.ts.)
 */

import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { monthOf, usageKey } from '../../functions/adapters/dynamodb/keys.js';
import type { RendererInstance } from '../../functions/renderer/renderer.js';
import { closeServer, createLocalHttpServer, listen } from '../../lib/local/http-server.js';
import { type Api, createApi, dynamoDbClient, useLocalStack } from '../helpers/local-stack.js';
import { controlMs, describeBound, type PaceBound, paceBound, since } from '../helpers/timing.js';
import { billedJobIds } from '../helpers/usage-ledger.js';

const local = useLocalStack({ plan: 'roomy' });

/** lose: the call reaches dynalite and lands, its answer never comes back (the SDK retries it). */
type Fault = 'pass' | 'throttle' | 'hang' | 'lose';
/** Decides each DynamoDB call's fate from its operation (X-Amz-Target) and JSON body. */
type Rule = (operation: string, body: string) => Fault;

const readAll = (req: IncomingMessage): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });

/** One account's faults: its rule, and the faults it caused so far. */
interface AccountFaults {
  readonly faulted: string[];
  set(next: Rule): void;
}

/**
 * A proxy in front of dynalite that throttles or hangs the calls its rules pick. Each rule is an
 * account's (every item of an account is keyed `ACCOUNT#<id>`), so that the tests, each with an
 * account of its own, run side by side.
 */
const startDynamoDbFaults = async (target: string) => {
  const accounts = new Map<string, { rule: Rule; faulted: string[] }>();
  const upstream = new URL(target);
  const server = createServer(async (req, res) => {
    const body = await readAll(req);
    const operation = String(req.headers['x-amz-target'] ?? '').split('.')[1] ?? '';
    const text = body.toString('utf8');
    const account = [...accounts].find(([id]) => text.includes(`"ACCOUNT#${id}"`))?.[1];
    const fault = account ? account.rule(operation, text) : 'pass';
    if (fault !== 'pass') account?.faulted.push(`${operation}:${fault}`);
    if (fault === 'hang') return; // never answers: the client's timeout must give up
    if (fault === 'throttle') {
      res.writeHead(400, { 'content-type': 'application/x-amz-json-1.0' });
      res.end(
        JSON.stringify({
          __type: 'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException',
          message: 'The level of configured provisioned throughput for the table was exceeded.',
        }),
      );
      return;
    }
    const forwarded = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        path: req.url,
        method: req.method,
        headers: req.headers,
      },
      (answer) => {
        if (fault === 'lose') {
          answer.resume();
          return;
        }
        res.writeHead(answer.statusCode ?? 500, answer.headers);
        answer.pipe(res);
      },
    );
    forwarded.end(body);
  });
  const { port } = await listen(server, 0, '127.0.0.1');
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    /** The faults of account `id`'s calls (none until its rule is set). */
    of(id: string): AccountFaults {
      const state = { rule: (() => 'pass') as Rule, faulted: [] as string[] };
      accounts.set(id, state);
      return {
        faulted: state.faulted,
        set(next) {
          state.rule = next;
          state.faulted.length = 0;
        },
      };
    },
  };
};

/** Answers Lambda Invoke as a renderer that ran out of time does. */
const startTimedOutLambda = async () => {
  const invoked: string[] = [];
  const server = createServer(async (req, res) => {
    await readAll(req);
    invoked.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'application/json', 'x-amz-function-error': 'Unhandled' });
    res.end(
      JSON.stringify({ errorMessage: '2026-11-25T10:00:28.123Z 1b7c… Task timed out after 28.00 seconds' }),
    );
  });
  const { port } = await listen(server, 0, '127.0.0.1');
  return { url: `http://127.0.0.1:${port}`, server, invoked };
};

let dynamoDbFaults: Awaited<ReturnType<typeof startDynamoDbFaults>>;
let lambda: Awaited<ReturnType<typeof startTimedOutLambda>>;
const gateways: Server[] = [];
const renderers: RendererInstance[] = [];
let viaFaults: Api;
let viaFaultsShortLease: Api;
let viaTimedOutRenderer: Api;

/** A gateway whose pdf handler is made with `env` (and the in-process renderer unless `invoke`). */
const gatewayWith = async (env: Record<string, string>, invoke: boolean): Promise<Api> => {
  const { createHandler } = await import('../../functions/pdf/index.js');
  const { createInProcessRenderer } = await import('../../functions/renderer/in-process.js');
  const renderer = invoke ? undefined : createInProcessRenderer();
  if (renderer) renderers.push(renderer);
  // No job here names a webhook endpoint: the webhook queue's URL is a stand-in.
  const handler = createHandler(
    { WEBHOOK_QUEUE_URL: 'http://127.0.0.1:9/000000000000/webhooks', ...env },
    renderer ? { renderer } : {},
  );
  const gateway = createLocalHttpServer({
    quiet: true,
    logError: () => {},
    loadHandler: async () => handler,
  });
  gateways.push(gateway);
  const { port } = (await listen(gateway, 0, '127.0.0.1')) as AddressInfo;
  return createApi(`http://127.0.0.1:${port}`);
};

beforeAll(async () => {
  dynamoDbFaults = await startDynamoDbFaults(local.stack.dynamoDbEndpoint);
  lambda = await startTimedOutLambda();
  viaFaults = await gatewayWith({ ...local.stack.handlerEnv, DYNAMODB_ENDPOINT: dynamoDbFaults.url }, false);
  viaFaultsShortLease = await gatewayWith(
    { ...local.stack.handlerEnv, DYNAMODB_ENDPOINT: dynamoDbFaults.url, JOB_LEASE_SECONDS: '10' },
    false,
  );
  viaTimedOutRenderer = await gatewayWith(
    { ...local.stack.handlerEnv, RENDERER_FUNCTION_NAME: 'renderer', LAMBDA_ENDPOINT: lambda.url },
    true,
  );
});

afterAll(async () => {
  await Promise.all(renderers.map((r) => r.close()));
  for (const server of [...gateways, dynamoDbFaults?.server, lambda?.server]) {
    server?.closeAllConnections();
    if (server) await closeServer(server, 100);
  }
});

const unitsUsed = async (accountId: string): Promise<number> => {
  const db = DynamoDBDocumentClient.from(dynamoDbClient(local.stack));
  const out = await db.send(
    new GetCommand({ TableName: local.stack.tableName, Key: usageKey(accountId, monthOf(new Date())) }),
  );
  return Number(out.Item?.renders_used ?? 0);
};

const render = (api: Api, token: string, text: string) =>
  api('/v1/pdf', { method: 'POST', token, body: { html: `<p>${text}</p>` } });

/** No job of the account is left pending or rendering, whatever happened. */
const expectNoJobInFlight = async (token: string) => {
  const jobs = (await local.api('/v1/pdf?limit=100', { token })).json as { status: string }[];
  expect(jobs.filter((j) => j.status === 'pending' || j.status === 'rendering')).toEqual([]);
  return jobs;
};

describe.concurrent('DynamoDB faults', () => {
  it('rides out brief throttling with the SDK retries', async () => {
    const sub = `acct-${Date.now()}-retry`;
    const token = await local.sessionToken(sub);
    const faults = dynamoDbFaults.of(sub);
    let throttled = 0;
    faults.set((operation) => (operation === 'PutItem' && throttled++ < 2 ? 'throttle' : 'pass'));
    const res = await render(viaFaults, token, 'after two throttles');
    expect(res.status, res.text).toBe(201);
    expect(faults.faulted).toEqual(['PutItem:throttle', 'PutItem:throttle']);
    faults.set(() => 'pass');
  });

  it('answers 503 SERVICE_BUSY with Retry-After when completing the job stays throttled; the job fails and the unit comes back', async () => {
    const sub = `acct-${Date.now()}-complete`;
    const token = await local.sessionToken(sub);
    const faults = dynamoDbFaults.of(sub);
    faults.set((operation, body) =>
      operation === 'UpdateItem' && body.includes('"completed"') ? 'throttle' : 'pass',
    );
    const res = await render(viaFaults, token, 'never completed');
    // An overloaded store is back-pressure, not a fault: retry soon.
    expect(res.status, res.text).toBe(503);
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(res.json.error).toMatchObject({ code: 'SERVICE_BUSY', job_id: expect.stringMatching(/^job_/) });
    expect(faults.faulted).toEqual(['UpdateItem:throttle', 'UpdateItem:throttle', 'UpdateItem:throttle']);
    faults.set(() => 'pass');

    const jobs = await expectNoJobInFlight(token);
    expect(jobs).toMatchObject([
      { id: res.json.error.job_id, status: 'failed', error: { code: 'SERVICE_BUSY' } },
    ]);
    expect(await unitsUsed(sub)).toBe(0);
    const again = await render(viaFaults, token, 'works again');
    expect(again.status).toBe(201);
    expect(await unitsUsed(sub)).toBe(1);
    // The job that failed is not billed; the one that completed is, once.
    expect(await billedJobIds(local.stack, sub)).toEqual([again.json.id]);
  });

  it('gives up on a hanging DynamoDB within seconds, with 503 SERVICE_BUSY and nothing held', async () => {
    const sub = `acct-${Date.now()}-hang`;
    const token = await local.sessionToken(sub);
    const faults = dynamoDbFaults.of(sub);
    faults.set((operation, body) =>
      operation === 'PutItem' && body.includes('"pending"') ? 'hang' : 'pass',
    );
    // The control: another account's render through the same faulty path, which lets it pass.
    const bystander = await local.sessionToken();
    const control = await controlMs(async () => {
      expect((await render(viaFaults, bystander, 'control')).status).toBe(201);
    }, 1);
    const started = performance.now();
    const res = await render(viaFaults, token, 'job never written');
    const ms = since(started);
    expect(res.status, res.text).toBe(503);
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(res.json.error.code).toBe('SERVICE_BUSY');
    // Three attempts of 2 s each plus the SDK's backoff, far inside the function's 29 s.
    const bound: PaceBound = { expectedMs: 6_000, slackMs: 6_000, controlMs: control, factor: 10 };
    expect(ms, describeBound(ms, bound)).toBeLessThan(paceBound(bound));
    expect(faults.faulted).toEqual(['PutItem:hang', 'PutItem:hang', 'PutItem:hang']);
    faults.set(() => 'pass');

    await expectNoJobInFlight(token);
    expect(await unitsUsed(sub)).toBe(0);
    expect((await render(viaFaults, token, 'works again')).status).toBe(201);
  });
});

describe.concurrent('writes that landed but whose answer was lost (the SDK sends them again)', () => {
  it('count once: the job, its unit, its completion and its refund each happen once', {
    timeout: 90_000,
  }, async () => {
    const sub = `acct-${Date.now()}-lost-answers`;
    const token = await local.sessionToken(sub);
    const faults = dynamoDbFaults.of(sub);
    const lost = new Set<string>();
    /** Loses the answer of the first call that matches each marker; the SDK's retry then meets its own write. */
    const loseFirst =
      (markers: readonly string[]): Rule =>
      (operation, body) => {
        for (const marker of markers) {
          if (!lost.has(marker) && `${operation} ${body}`.includes(marker)) {
            lost.add(marker);
            return 'lose';
          }
        }
        return 'pass';
      };
    // And the usage ledger's entry (issue 39): recorded once, though the SDK sends it twice.
    faults.set(
      loseFirst(['in_progress', '"pending"', 'ADD renders_used :one', '"completed"', 'USAGE_ENTRY#']),
    );
    // The control: another account's render through the same path, nothing lost.
    const bystander = await local.sessionToken();
    const control = await controlMs(async () => {
      expect((await render(viaFaults, bystander, 'control')).status).toBe(201);
    }, 1);
    const started = performance.now();
    const ok = await viaFaults('/v1/pdf', {
      method: 'POST',
      token,
      body: { html: '<p>every answer lost once</p>' },
      headers: { 'Idempotency-Key': 'lost-answers-1' },
    });
    const ms = performance.now() - started;
    expect(ok.status, ok.text).toBe(201);
    expect(faults.faulted).toEqual([
      'PutItem:lose',
      'PutItem:lose',
      'UpdateItem:lose',
      'UpdateItem:lose',
      'PutItem:lose',
    ]);
    expect(await unitsUsed(sub)).toBe(1);
    expect(await billedJobIds(local.stack, sub)).toEqual([ok.json.id]);
    // Its own claim did not make the request wait for the claim's lease (20 s) to run out: it
    // ends before half the lease plus twice a render's time in this run (at least the lease).
    const bound: PaceBound = { expectedMs: 10_000, slackMs: 10_000, controlMs: control, factor: 2 };
    expect(ms, describeBound(ms, bound)).toBeLessThan(paceBound(bound));
    const replay = await viaFaults('/v1/pdf', {
      method: 'POST',
      token,
      body: { html: '<p>every answer lost once</p>' },
      headers: { 'Idempotency-Key': 'lost-answers-1' },
    });
    expect(replay.json.id).toBe(ok.json.id);

    lost.clear();
    faults.set(loseFirst(['ADD renders_used :minusOne']));
    const failed = await viaFaults('/v1/pdf', {
      method: 'POST',
      token,
      body: { html: '<p>x</p>', page_load: { wait_for_selector: '#never', timeout_ms: 1000 } },
    });
    expect(failed.status, failed.text).toBe(504);
    expect(faults.faulted).toEqual(['UpdateItem:lose']);
    faults.set(() => 'pass');
    await expectNoJobInFlight(token);
    // The refund was sent twice and counted once: the completed render's unit is still used.
    expect(await unitsUsed(sub)).toBe(1);
    expect(await billedJobIds(local.stack, sub)).toEqual([ok.json.id]);
  });
});

describe.concurrent('a clean-up step that times out', () => {
  it('leaves the failed job to the sweeper, which gives the unit back; the answer names the job', {
    timeout: 90_000,
  }, async () => {
    const sub = `acct-${Date.now()}-refund-hangs`;
    const token = await local.sessionToken(sub);
    const faults = dynamoDbFaults.of(sub);
    // Every attempt to give the unit back hangs (the SDK gives each up after 2 s).
    faults.set((operation, body) =>
      operation === 'UpdateItem' && body.includes('ADD renders_used :minusOne') ? 'hang' : 'pass',
    );
    const res = await viaFaultsShortLease('/v1/pdf', {
      method: 'POST',
      token,
      body: { html: '<p>never done</p>', page_load: { wait_for_selector: '#never', timeout_ms: 1000 } },
    });
    expect(res.status, res.text).toBe(504);
    expect(res.json.error).toMatchObject({
      code: 'PDF_RENDERING_TIMEOUT',
      job_id: expect.stringMatching(/^job_/),
    });
    expect(faults.faulted.length).toBeGreaterThan(0);
    faults.set(() => 'pass');
    const job = await local.api(`/v1/pdf/${res.json.error.job_id}`, { token });
    expect(job.json).toMatchObject({ status: 'failed', error: { code: 'PDF_RENDERING_TIMEOUT' } });
    // The refund's three tries took about 20 s, past its 10 s grace: the sweeper may already have
    // reconciled the month by now.
    // The local stack's sweeper (every 5 s) reconciles the month once the refund's grace (the lease) ran out.
    const started = Date.now();
    while ((await unitsUsed(sub)) !== 0 && Date.now() - started < 30_000) await sleep(500);
    console.info(`refund left to the sweeper: unit back ${Date.now() - started} ms after the answer`);
    expect(await unitsUsed(sub)).toBe(0);
    expect((await local.api(`/v1/pdf/${res.json.error.job_id}`, { token })).json.status).toBe('failed');
  });
});

describe.concurrent('the renderer Lambda timing out', () => {
  it('answers 504 PDF_RENDERING_TIMEOUT with the failed job, and gives the unit back', async () => {
    const sub = `acct-${Date.now()}-timeout`;
    const token = await local.sessionToken(sub);
    const res = await render(viaTimedOutRenderer, token, 'too slow');
    expect(lambda.invoked).toEqual(['/2015-03-31/functions/renderer/invocations']);
    expect(res.status).toBe(504);
    expect(res.json.error).toMatchObject({
      code: 'PDF_RENDERING_TIMEOUT',
      job_id: expect.stringMatching(/^job_/),
    });
    expect(res.json.error.message).not.toMatch(/Task timed out|28\.00/);
    const job = await local.api(`/v1/pdf/${res.json.error.job_id}`, { token });
    expect(job.json).toMatchObject({ status: 'failed', error: { code: 'PDF_RENDERING_TIMEOUT' } });
    expect(await unitsUsed(sub)).toBe(0);
    // The same account renders at once through the in-process renderer.
    expect((await render(local.api, token, 'next')).status).toBe(201);
  });
});
