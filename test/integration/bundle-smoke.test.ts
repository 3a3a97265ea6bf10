/**
 * The bundles that `cdk synth` builds, run the way Lambda runs them, against the local stack:
 * every function's built file loaded from its asset directory in its own process (outside the
 * repository, so nothing resolves from our node_modules), with only its template environment
 * (references swapped for the local stack's stand-ins), the renderer with the Chromium layer's
 * node_modules on NODE_PATH and its fonts. Requests go through the local API Gateway emulation to
 * the bundles; the pdf bundle invokes the renderer bundle through Lambda's Invoke API, and sends
 * async renders to the local SQS server, whose messages a poller (the event source mapping's
 * stand-in) hands to the render queue consumer's bundle.
 *
 * One synth (with esbuild and the layer) per run, shared with lambda-sandbox (bundled-synth.ts),
 * and one set of processes for the whole file.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { SQSBatchResponse } from 'aws-lambda';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createWebhookDeliveryStore } from '../../functions/adapters/dynamodb/webhooks.js';
import { renderWorker, sweeper, webhookSender } from '../../functions/consumers.js';
import { systemClock } from '../../functions/core/runtime.js';
import { apiResources, routes } from '../../functions/routes.js';
import { LAMBDA_UNZIPPED_LIMIT_BYTES } from '../../lib/chromium-layer.js';
import { closeServer, createLocalHttpServer, listen } from '../../lib/local/http-server.js';
import { type Poller, startPoller } from '../../lib/local/sqs/poller.js';
import { queueArn } from '../../lib/local/sqs/queues.js';
import type { LocalStack } from '../../lib/local/stack.js';
import { LOCAL_CREDENTIALS, LOCAL_RENDER_QUEUE, startLocalStack } from '../../lib/local/stack.js';
import { invoiceWith, validInvoice } from '../fixtures/e-invoice.js';
import { multilingualHtml, SCRIPT_SAMPLES } from '../fixtures/multilingual.js';
import { waitForJob } from '../helpers/async-jobs.js';
import { synthBundled } from '../helpers/bundled-synth.js';
import {
  apiKeySecretStandIn,
  type BundledFunction,
  bundledFunction,
  type LambdaProcess,
  resolveEnvironment,
  startLambdaProcess,
} from '../helpers/cdk-lambda.js';
import type { Synthesized } from '../helpers/cdk-synth.js';
import { type FontBucket, startFontBucket } from '../helpers/font-bucket.js';
import { type Api, createApi, createTempDataDir, dynamoDbClient, type Json } from '../helpers/local-stack.js';
import { readPdf } from '../helpers/pdf.js';
import { glyphsAfterLabels, isMissingGlyph, readGlyphs } from '../helpers/pdf-fonts.js';
import { onPdf, pdfdetachList, pdfinfoMeta } from '../helpers/pdf-readers.js';
import { listenOnFreePort } from '../helpers/render-fixtures.js';
import { makeTestKeys, PASSPHRASE } from '../helpers/signing-keys.js';

/** Variables that exist only locally: where the emulators and the local token issuer's keys are. */
const LOCAL_ONLY = ['DYNAMODB_ENDPOINT', 'S3_ENDPOINT', 'AWS_ENDPOINT_URL_SQS', 'LOCAL_JWKS_FILE'] as const;

/** Stands in for the dashboard distribution's URL in the fallback's environment. */
const SMOKE_DASHBOARD_URL = 'https://dashboard.smoke.example/';

describe('the synthesized bundles, run as Lambda runs them, against the local stack', () => {
  let outdir: string;
  let dataDir: string;
  let s: Synthesized;
  let local: LocalStack;
  /** The CJK fonts' bucket the renderers fetch from (test/helpers/font-bucket.ts). */
  let fontBucket: FontBucket | undefined;
  let gateway: Server;
  let gatewayUrl = '';
  let api: Api;
  let token: string;
  const processes = new Map<string, LambdaProcess>();
  /** A webhook receiver on loopback, allowed to the webhook bundles (WEBHOOK_EGRESS_ALLOW_HOSTS). */
  const hooks: { headers: IncomingHttpHeaders; body: string }[] = [];
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      hooks.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(204).end();
    });
  });
  let receiverHost: string;
  /** No SQS server here: the queue's URL is a stand-in, and the sender bundle is invoked with an SQSEvent. */
  const WEBHOOK_QUEUE_STAND_IN = 'http://127.0.0.1:9/000000000000/webhooks';
  let poller: Poller | undefined;
  let sqs: SQSClient | undefined;

  beforeAll(async () => {
    receiverHost = `127.0.0.1:${await listenOnFreePort(receiver)}`;
    outdir = await mkdtemp(join(tmpdir(), 'cdk-bundle-smoke-'));
    s = await synthBundled();
    // Lambda has no node_modules above /var/task; neither may the bundles here.
    for (const start of [outdir, s.assembly.directory]) {
      for (let dir = start; dir !== dirname(dir); dir = dirname(dir)) {
        expect(existsSync(join(dir, 'node_modules')), `${dir}/node_modules`).toBe(false);
      }
    }

    dataDir = await createTempDataDir();
    // The render queue is fed to the consumer's bundle below, not to the stack's own consumer.
    local = await startLocalStack({ port: 0, dataDir, quiet: true, asyncConsumer: false });
    const lambdaEnvironment = {
      AWS_REGION: local.region,
      AWS_DEFAULT_REGION: local.region,
      AWS_ACCESS_KEY_ID: local.handlerEnv.AWS_ACCESS_KEY_ID as string,
      AWS_SECRET_ACCESS_KEY: local.handlerEnv.AWS_SECRET_ACCESS_KEY as string,
    };
    const start = (name: string, fn: BundledFunction, standIns: Record<string, string>, extra = {}) =>
      startLambdaProcess(fn, {
        functionName: name,
        workDir: outdir,
        environment: { ...lambdaEnvironment, ...extra, ...resolveEnvironment(fn, standIns) },
      });

    const rendererFn = bundledFunction(s, s.stack.renderer.function);
    fontBucket = await startFontBucket(rendererFn.environment);
    const renderer = await start(
      'pdf-render-service-renderer',
      rendererFn,
      fontBucket.environment,
      fontBucket.environment,
    );
    processes.set('renderer', renderer);
    const localOnly = Object.fromEntries(LOCAL_ONLY.map((name) => [name, local.handlerEnv[name] as string]));
    // No Secrets Manager here: the local stack's API-key secret stands in for the API functions,
    // the webhook sender and the render worker (it unseals a protection's passwords in orders).
    const secret = apiKeySecretStandIn(local.handlerEnv);
    await Promise.all(
      [...s.stack.api.functions].map(async ([resource, fn]) => {
        const started = await start(
          `pdf-render-service-${resource}`,
          bundledFunction(s, fn),
          {
            ...local.handlerEnv,
            ...secret.standIns,
            RENDERER_FUNCTION_NAME: renderer.functionName,
            WEBHOOK_QUEUE_URL: WEBHOOK_QUEUE_STAND_IN,
            // The distribution's URL, which the fallback redirects `/` to.
            DASHBOARD_URL: SMOKE_DASHBOARD_URL,
          },
          {
            ...localOnly,
            ...secret.environment,
            LAMBDA_ENDPOINT: renderer.endpoint,
            POWERTOOLS_LOG_LEVEL: 'ERROR',
            WEBHOOK_EGRESS_ALLOW_HOSTS: receiverHost,
          },
        );
        processes.set(resource, started);
      }),
    );

    // The sweeper, with only what its Lambda is given (the table, the render queue, the webhook
    // queue: the local stack's own, whose sender delivers what the sweeper sends) and the local endpoints.
    processes.set(
      'sweeper',
      await start(
        'pdf-render-service-sweeper',
        bundledFunction(s, s.stack.consumer(sweeper.name).function),
        { ...local.handlerEnv },
        {
          DYNAMODB_ENDPOINT: localOnly.DYNAMODB_ENDPOINT,
          AWS_ENDPOINT_URL_SQS: localOnly.AWS_ENDPOINT_URL_SQS,
          POWERTOOLS_LOG_LEVEL: 'ERROR',
        },
      ),
    );
    // The webhook sender, with what its Lambda is given (the table, the secret, the queue).
    processes.set(
      'webhook-sender',
      await start(
        'pdf-render-service-webhook-sender',
        bundledFunction(s, s.stack.consumer(webhookSender.name).function),
        { ...local.handlerEnv, ...secret.standIns, WEBHOOK_QUEUE_URL: WEBHOOK_QUEUE_STAND_IN },
        {
          DYNAMODB_ENDPOINT: localOnly.DYNAMODB_ENDPOINT,
          ...secret.environment,
          WEBHOOK_EGRESS_ALLOW_HOSTS: receiverHost,
          POWERTOOLS_LOG_LEVEL: 'ERROR',
        },
      ),
    );

    // The async renderer (the renderer's bundle, sized for large documents), and the render
    // queue's consumer that invokes it, fed by the event source mapping's stand-in
    // (lib/local/sqs/poller.ts) as Lambda's would: an SQSEvent per message.
    const asyncRenderer = await start(
      'pdf-render-service-async-renderer',
      bundledFunction(s, s.stack.asyncRenderer.function),
      fontBucket.environment,
      fontBucket.environment,
    );
    processes.set('async-renderer', asyncRenderer);
    const worker = await start(
      'pdf-render-service-render-worker',
      bundledFunction(s, s.stack.consumer(renderWorker.name).function),
      // No job here names a webhook endpoint: the webhook queue's URL is a stand-in.
      {
        ...local.handlerEnv,
        ...secret.standIns,
        WEBHOOK_QUEUE_URL: WEBHOOK_QUEUE_STAND_IN,
        RENDERER_FUNCTION_NAME: asyncRenderer.functionName,
      },
      {
        ...secret.environment,
        DYNAMODB_ENDPOINT: localOnly.DYNAMODB_ENDPOINT,
        S3_ENDPOINT: localOnly.S3_ENDPOINT,
        AWS_ENDPOINT_URL_SQS: localOnly.AWS_ENDPOINT_URL_SQS,
        LAMBDA_ENDPOINT: asyncRenderer.endpoint,
        POWERTOOLS_LOG_LEVEL: 'ERROR',
      },
    );
    processes.set('render-worker', worker);
    sqs = new SQSClient({
      region: local.region,
      endpoint: local.sqsEndpoint,
      credentials: LOCAL_CREDENTIALS,
    });
    poller = startPoller({
      client: sqs,
      queueUrl: local.renderQueueUrl,
      queueArn: queueArn(LOCAL_RENDER_QUEUE),
      region: local.region,
      consumer: async (event) => {
        const { payload, functionError } = await worker.invoke(event);
        if (functionError) throw new Error(`render-worker: ${functionError}: ${JSON.stringify(payload)}`);
        return payload as SQSBatchResponse;
      },
    });

    // API Gateway in front of the bundles: the local emulation, with each resource's handler
    // being an Invoke of its bundle's process.
    gateway = createLocalHttpServer({
      quiet: true,
      logError: () => {},
      loadHandler: async (resource) => {
        const target = processes.get(resource);
        if (!target) throw new Error(`no bundle for ${resource}`);
        return async (event) => {
          const { payload, functionError } = await target.invoke(event);
          if (functionError) throw new Error(`${resource}: ${functionError}: ${JSON.stringify(payload)}`);
          return payload;
        };
      },
    });
    const { port } = await listen(gateway, 0, '127.0.0.1');
    gatewayUrl = `http://127.0.0.1:${port}`;
    api = createApi(gatewayUrl);
    token = await local.issueToken({ sub: 'smoke-user', email: 'smoke@example.com' });
    // The run's bundled synth (esbuild, the layer), maybe made by lambda-sandbox meanwhile, and a
    // process per function: on a shared 2-core machine that outlasts the default hook timeout.
  }, 300_000);

  afterEach((context) => {
    if (context.task.result?.state !== 'fail') return;
    for (const [resource, p] of processes) console.error(`--- ${resource} bundle log:\n${p.logs()}`);
  });

  afterAll(async () => {
    receiver.close();
    await poller?.stop();
    sqs?.destroy();
    if (gateway) await closeServer(gateway, 1000);
    await Promise.all([...processes.values()].map((p) => p.close()));
    await local?.close();
    await fontBucket?.close();
    await Promise.all(
      [outdir, dataDir].filter(Boolean).map((dir) => rm(dir, { recursive: true, force: true })),
    );
  });

  it('starts every function bundle: one per API resource, the fallback, the renderer, the sweeper, the webhook sender and the render queue consumer', () => {
    expect([...processes.keys()].sort()).toEqual(
      [
        ...apiResources(),
        'fallback',
        'renderer',
        'async-renderer',
        'sweeper',
        'webhook-sender',
        'render-worker',
      ].sort(),
    );
  });

  it('creates an endpoint through the webhooks bundle and sends a signed event through the sender bundle', async () => {
    const created = await api('/v1/webhooks', {
      method: 'POST',
      token,
      body: { url: `http://${receiverHost}/hook` },
    });
    expect(created.status, created.text).toBe(201);
    const { id, secret } = created.json as Json;
    // What the test route would queue: a delivery, then its first message (no SQS server here).
    const deliveryId = 'msg_01JDELIVERYSMOKE0000000000';
    const payload = JSON.stringify({
      type: 'webhook.test',
      timestamp: new Date().toISOString(),
      data: { id },
    });
    await createWebhookDeliveryStore(
      DynamoDBDocumentClient.from(dynamoDbClient(local)),
      local.tableName,
      systemClock,
    ).create({
      id: deliveryId,
      webhook_id: id,
      account_id: 'smoke-user',
      event_type: 'webhook.test',
      status: 'pending',
      created_at: new Date().toISOString(),
      updated_at: new Date().toISOString(),
      next_attempt_at: new Date().toISOString(),
      attempts: [],
      payload,
      window_started_at: Date.now(),
      window_first_attempt: 1,
    });
    const message = { v: 1, account_id: 'smoke-user', webhook_id: id, delivery_id: deliveryId, attempt: 1 };
    const { payload: answer, functionError } = await (
      processes.get('webhook-sender') as LambdaProcess
    ).invoke({
      Records: [{ messageId: 'm-1', body: JSON.stringify(message), attributes: {}, messageAttributes: {} }],
    });
    expect(functionError, JSON.stringify(answer)).toBeUndefined();
    expect(answer).toEqual({ batchItemFailures: [] });
    expect(hooks).toHaveLength(1);
    expect(
      new Webhook(secret).verify(hooks[0]?.body as string, hooks[0]?.headers as Record<string, string>),
    ).toEqual(JSON.parse(payload));
    const deliveries = await api(`/v1/webhooks/${id}/deliveries`, { token });
    expect((deliveries.json as Json)[0]).toMatchObject({ id: deliveryId, status: 'succeeded' });
  });

  it('renders an async job: the pdf bundle queues it, the consumer bundle has the async renderer bundle render it', async () => {
    const rendered = (name: string) => processes.get(name)?.invocations() ?? 0;
    const before = { async: rendered('async-renderer'), sync: rendered('renderer') };
    const res = await api('/v1/pdf', {
      method: 'POST',
      token,
      body: {
        html: '<h1>Async smoke</h1><p>{{ who }}</p>',
        variables: { who: 'the async renderer bundle' },
        async: true,
      },
    });
    expect(res.status, res.text).toBe(202);
    const job = await waitForJob(api, token, res.json.id);
    expect(job).toMatchObject({ status: 'completed', mode: 'async', attempts: 1, page_count: 1 });
    const pdf = await readPdf(new Uint8Array(await (await fetch(job.download_url)).arrayBuffer()));
    expect(pdf.text).toContain('the async renderer bundle');
    // Rendered by the async renderer, invoked once, not by the sync one; the consumer bundle
    // carries no Chromium and no layer.
    expect(rendered('async-renderer') - before.async).toBe(1);
    expect(rendered('renderer') - before.sync).toBe(0);
    expect(bundledFunction(s, s.stack.consumer(renderWorker.name).function).layerDirs).toEqual([]);
  });

  it('renders a real PDF through the pdf bundle and the renderer bundle with its Chromium layer', async () => {
    const res = await api('/v1/pdf', {
      method: 'POST',
      token,
      body: {
        html: '<h1>Bundle smoke</h1><p>{{ greeting }}, {{ name }}!</p>',
        variables: { greeting: 'Hello', name: 'Lambda' },
      },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.json).toMatchObject({ status: 'completed', page_count: 1, download_url: expect.any(String) });
    expect(res.json.file_size_bytes).toBeGreaterThan(0);

    const download = await fetch(res.json.download_url);
    expect(download.status).toBe(200);
    const bytes = new Uint8Array(await download.arrayBuffer());
    expect(new TextDecoder().decode(bytes.slice(0, 5))).toBe('%PDF-');
    const pdf = await readPdf(bytes);
    expect(pdf.pageCount).toBe(1);
    expect(pdf.text).toContain('Hello, Lambda!');

    const job = await api(`/v1/pdf/${res.json.id}`, { token });
    expect(job.status).toBe(200);
    expect(job.json).toMatchObject({ id: res.json.id, status: 'completed' });
  });

  it('validates an e-invoice in the pdf bundle and embeds it in a PDF/A-3b in the renderer bundle', async () => {
    const body = (invoice: Record<string, unknown>) => ({
      html: '<h1>Invoice {{ number }}</h1>',
      variables: invoice,
      e_invoice: { standard: 'factur-x', profile: 'en16931', invoice_from_variables: true },
    });
    const res = await api('/v1/pdf', { method: 'POST', token, body: body(validInvoice()) });
    expect(res.status, res.text).toBe(201);
    expect(res.json.e_invoice).toMatchObject({ standard: 'factur-x', profile: 'en16931', valid: true });
    const bytes = new Uint8Array(await (await fetch(res.json.download_url)).arrayBuffer());
    expect(await pdfdetachList(bytes)).toEqual(['factur-x.xml']);
    expect(await pdfinfoMeta(bytes)).toMatch(/<pdfaid:part>3<\/pdfaid:part>/);
    const refused = await api('/v1/pdf', {
      method: 'POST',
      token,
      body: body(invoiceWith((i) => Object.assign(i, { totals: { grand_total: 1 } }))),
    });
    expect(refused.status, refused.text).toBe(422);
    expect(refused.json.error.details).toContainEqual(expect.objectContaining({ rule: 'BR-CO-15' }));
  });

  it('registers a signing key through the signing-keys bundle (PKCS#12) and signs in the renderer bundle, visibly', async () => {
    const keys = await makeTestKeys();
    try {
      const key = await api('/v1/signing-keys', {
        method: 'POST',
        token,
        body: { name: 'smoke', pkcs12_base64: keys.p12, passphrase: PASSPHRASE },
      });
      expect(key.status, key.text).toBe(201);
      const res = await api('/v1/pdf', {
        method: 'POST',
        token,
        body: {
          html: '<h1>Signed</h1>',
          signature: { key_id: key.json.id, appearance: { page: 1, x: 36, y: 36, width: 200, height: 50 } },
        },
      });
      expect(res.status, res.text).toBe(201);
      const bytes = new Uint8Array(await (await fetch(res.json.download_url)).arrayBuffer());
      const report = await onPdf(bytes, 'pdfsig', (f) => [f]);
      expect(report.stdout).toContain('Signature Validation: Signature is Valid.');
      expect(report.stdout).toContain('Signer Certificate Common Name: Invoice Signer EC');
    } finally {
      await keys.remove();
    }
  });

  it('prints every script with the layer’s fonts, which the renderer finds through FONTCONFIG_FILE', async () => {
    const res = await api('/v1/pdf', { method: 'POST', token, body: { html: multilingualHtml() } });
    expect(res.status, res.text).toBe(201);
    const glyphs = await readGlyphs(new Uint8Array(await (await fetch(res.json.download_url)).arrayBuffer()));
    expect(glyphs.filter(isMissingGlyph)).toEqual([]);
    const lines = glyphsAfterLabels(
      glyphs,
      SCRIPT_SAMPLES.map((sample) => sample.key),
    );
    for (const sample of SCRIPT_SAMPLES) {
      expect([...new Set(lines.get(sample.key)?.map((g) => g.font))], sample.key).toEqual([
        expect.stringMatching(sample.font),
      ]);
    }
  });

  it('fits Lambda’s 250 MB for a function’s code and layers, unzipped', () => {
    const sizeOf = (path: string): number =>
      statSync(path).isDirectory()
        ? readdirSync(path).reduce((sum, entry) => sum + sizeOf(join(path, entry)), 0)
        : statSync(path).size;
    for (const fn of [
      s.stack.renderer.function,
      s.stack.asyncRenderer.function,
      s.stack.consumer(renderWorker.name).function,
    ]) {
      const bundled = bundledFunction(s, fn);
      const code = sizeOf(bundled.codeDir);
      const layers = bundled.layerDirs.reduce((sum, dir) => sum + sizeOf(dir), 0);
      console.info(
        `${fn.resourceName}: code ${(code / 1e6).toFixed(1)} MB + layer ${(layers / 1e6).toFixed(1)} MB unzipped`,
      );
      expect(code + layers).toBeLessThan(LAMBDA_UNZIPPED_LIMIT_BYTES);
    }
  });

  it('executes templates in the renderer bundle’s own worker file, and fails the job on a runtime error', async () => {
    expect(
      existsSync(join(bundledFunction(s, s.stack.renderer.function).codeDir, 'templating-worker.cjs')),
    ).toBe(true);
    const res = await api('/v1/pdf', {
      method: 'POST',
      token,
      body: {
        html: '{% for line in lines %}<p>{{ line.item }}: {{ "%.2f"|format(line.price) }}</p>{% endfor %}\n{{ 1 / 0 }}',
        variables: { lines: [{ item: 'Pens', price: 3.5 }] },
      },
    });
    expect(res.status, res.text).toBe(422);
    expect(res.json.error).toMatchObject({
      code: 'INVALID_HTML_TEMPLATE',
      job_id: expect.any(String),
      details: [{ field: 'html', line: 2 }],
    });
    const job = await api(`/v1/pdf/${res.json.error.job_id}`, { token });
    expect(job.json).toMatchObject({ status: 'failed', error: { code: 'INVALID_HTML_TEMPLATE' } });
    expect(processes.get('renderer')?.logs()).toContain('"message":"templating-worker-started"');
  });

  it('parses a large template in the templates and pdf bundles’ own parse worker file', async () => {
    // Batches parse through the same parser port as renders: their bundle carries the worker too.
    for (const resource of ['templates', 'pdf', 'batches']) {
      const fn = s.stack.api.functions.get(resource);
      if (!fn) throw new Error(`no ${resource} function`);
      expect(existsSync(join(bundledFunction(s, fn).codeDir, 'parse-worker.cjs')), resource).toBe(true);
    }
    // Over the 16 Ki characters from which parsing leaves the API's thread.
    const rows = '{% for line in lines %}<p>{{ line.item }}: {{ total }}</p>{% endfor %}\n'.repeat(400);
    const saved = await api('/v1/templates', { method: 'POST', token, body: { name: 'large', html: rows } });
    expect(saved.status, saved.text).toBe(201);
    expect(saved.json.variables).toEqual(['lines', 'total']);
    const broken = await api('/v1/pdf', { method: 'POST', token, body: { html: `${rows}{% if %}` } });
    expect(broken.status, broken.text).toBe(422);
    expect(broken.json.error).toMatchObject({
      code: 'INVALID_HTML_TEMPLATE',
      details: [{ field: 'html', line: 401 }],
    });
  });

  it('answers a render that fails in Chromium with the contract error, not a Lambda error', async () => {
    const res = await api('/v1/pdf', {
      method: 'POST',
      token,
      body: { html: '<p>never ready</p>', page_load: { wait_for_selector: '#never', timeout_ms: 1000 } },
    });
    expect(res.status, res.text).toBe(504);
    expect(res.json.error).toMatchObject({ code: 'PDF_RENDERING_TIMEOUT', job_id: expect.any(String) });
  });

  it('runs a sweep through the sweeper bundle, as EventBridge invokes it', async () => {
    const sweeper = processes.get('sweeper');
    const { payload, functionError } = await (sweeper as LambdaProcess).invoke({
      version: '0',
      'detail-type': 'Scheduled Event',
      source: 'aws.events',
      time: new Date().toISOString(),
      detail: {},
    });
    expect(functionError, JSON.stringify(payload)).toBeUndefined();
    expect(payload).toMatchObject({ expired: expect.any(Number), interrupted: 0, deferred: 0 });
  });

  it('answers every GET route without path parameters through its bundle', async () => {
    const listRoutes = routes.filter((r) => r.method === 'GET' && !r.path.includes('{'));
    expect(listRoutes.length).toBeGreaterThan(0);
    for (const route of listRoutes) {
      const res = await api(route.path, { token });
      expect(res.status, `${route.method} ${route.path}: ${res.text}`).toBe(200);
    }
  });

  it('answers unknown paths and methods through the fallback bundle', async () => {
    const unknown = await api('/v1/nothing-here', { token });
    expect(unknown.status).toBe(404);
    expect((unknown.json as Json).error.code).toBe('NOT_FOUND');
    const wrongMethod = await api('/v1/pdf', { method: 'DELETE', token });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toContain('GET');
    // The OpenAPI document, built inside the fallback's bundle.
    const document = await api('/openapi.json');
    expect(document.status, document.text).toBe(200);
    expect((document.json as Json).openapi).toMatch(/^3\.1\./);
    // `/` leads to the dashboard the stack deployed.
    const root = await fetch(`${gatewayUrl}/`, { redirect: 'manual' });
    expect(root.status).toBe(302);
    expect(root.headers.get('location')).toBe(SMOKE_DASHBOARD_URL);
  });
});
