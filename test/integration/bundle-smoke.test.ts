/**
 * The bundles that `cdk synth` builds, run the way Lambda runs them, against the local stack:
 * every function's built file loaded from its asset directory in its own process (outside the
 * repository, so nothing resolves from our node_modules), with only its template environment
 * (references swapped for the local stack's stand-ins), the renderer with the Chromium layer's
 * node_modules on NODE_PATH and its fonts. Requests go through the local API Gateway emulation to
 * the bundles; the pdf bundle invokes the renderer bundle through Lambda's Invoke API.
 *
 * One synth (with esbuild and the layer) per run, shared with lambda-sandbox (bundled-synth.ts),
 * and one set of processes for the whole file.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { apiResources, routes } from '../../functions/routes.js';
import { LAMBDA_UNZIPPED_LIMIT_BYTES } from '../../lib/chromium-layer.js';
import { closeServer, createLocalHttpServer, listen } from '../../lib/local/http-server.js';
import type { LocalStack } from '../../lib/local/stack.js';
import { startLocalStack } from '../../lib/local/stack.js';
import { multilingualHtml, SCRIPT_SAMPLES } from '../fixtures/multilingual.js';
import { synthBundled } from '../helpers/bundled-synth.js';
import {
  type BundledFunction,
  bundledFunction,
  type LambdaProcess,
  resolveEnvironment,
  startLambdaProcess,
} from '../helpers/cdk-lambda.js';
import type { Synthesized } from '../helpers/cdk-synth.js';
import { type Api, createApi, createTempDataDir, type Json } from '../helpers/local-stack.js';
import { readPdf } from '../helpers/pdf.js';
import { glyphsAfterLabels, isMissingGlyph, readGlyphs } from '../helpers/pdf-fonts.js';

/** Variables that exist only locally: where the emulators and the local token issuer's keys are. */
const LOCAL_ONLY = ['DYNAMODB_ENDPOINT', 'S3_ENDPOINT', 'LOCAL_JWKS_FILE', 'API_KEY_SECRET'] as const;

describe('the synthesized bundles, run as Lambda runs them, against the local stack', () => {
  let outdir: string;
  let dataDir: string;
  let s: Synthesized;
  let local: LocalStack;
  let gateway: Server;
  let api: Api;
  let token: string;
  const processes = new Map<string, LambdaProcess>();

  beforeAll(async () => {
    outdir = await mkdtemp(join(tmpdir(), 'cdk-bundle-smoke-'));
    s = await synthBundled();
    // Lambda has no node_modules above /var/task; neither may the bundles here.
    for (const start of [outdir, s.assembly.directory]) {
      for (let dir = start; dir !== dirname(dir); dir = dirname(dir)) {
        expect(existsSync(join(dir, 'node_modules')), `${dir}/node_modules`).toBe(false);
      }
    }

    dataDir = await createTempDataDir();
    local = await startLocalStack({ port: 0, dataDir, quiet: true });
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

    const renderer = await start(
      'pdf-render-service-renderer',
      bundledFunction(s, s.stack.renderer.function),
      {},
    );
    processes.set('renderer', renderer);
    const localOnly = Object.fromEntries(LOCAL_ONLY.map((name) => [name, local.handlerEnv[name] as string]));
    await Promise.all(
      [...s.stack.api.functions].map(async ([resource, fn]) => {
        const started = await start(
          `pdf-render-service-${resource}`,
          bundledFunction(s, fn),
          {
            // No Secrets Manager here: the local stack's API_KEY_SECRET (passed below) stands in.
            API_KEY_SECRET_ID: '',
            ...local.handlerEnv,
            RENDERER_FUNCTION_NAME: renderer.functionName,
          },
          { ...localOnly, LAMBDA_ENDPOINT: renderer.endpoint, POWERTOOLS_LOG_LEVEL: 'ERROR' },
        );
        processes.set(resource, started);
      }),
    );

    // The sweeper, with only what its Lambda is given (the table) and the local endpoints.
    processes.set(
      'sweeper',
      await start(
        'pdf-render-service-sweeper',
        bundledFunction(s, s.stack.sweeper.function),
        { ...local.handlerEnv },
        { DYNAMODB_ENDPOINT: localOnly.DYNAMODB_ENDPOINT, POWERTOOLS_LOG_LEVEL: 'ERROR' },
      ),
    );

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
    api = createApi(`http://127.0.0.1:${port}`);
    token = await local.issueToken({ sub: 'smoke-user', email: 'smoke@example.com' });
    // The run's bundled synth (esbuild, the layer), maybe made by lambda-sandbox meanwhile, and a
    // process per function: on a shared 2-core machine that outlasts the default hook timeout.
  }, 300_000);

  afterEach((context) => {
    if (context.task.result?.state !== 'fail') return;
    for (const [resource, p] of processes) console.error(`--- ${resource} bundle log:\n${p.logs()}`);
  });

  afterAll(async () => {
    if (gateway) await closeServer(gateway, 1000);
    await Promise.all([...processes.values()].map((p) => p.close()));
    await local?.close();
    await Promise.all(
      [outdir, dataDir].filter(Boolean).map((dir) => rm(dir, { recursive: true, force: true })),
    );
  });

  it('starts every function bundle: one per API resource, the fallback, the renderer and the sweeper', () => {
    expect([...processes.keys()].sort()).toEqual(
      [...apiResources(), 'fallback', 'renderer', 'sweeper'].sort(),
    );
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
    const renderer = bundledFunction(s, s.stack.renderer.function);
    const code = sizeOf(renderer.codeDir);
    const layers = renderer.layerDirs.reduce((sum, dir) => sum + sizeOf(dir), 0);
    console.info(
      `renderer: code ${(code / 1e6).toFixed(1)} MB + layer ${(layers / 1e6).toFixed(1)} MB unzipped`,
    );
    expect(code + layers).toBeLessThan(LAMBDA_UNZIPPED_LIMIT_BYTES);
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
  });
});
