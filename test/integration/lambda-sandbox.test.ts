/**
 * The renderer bundle that `cdk synth` builds, with its Chromium layer, run as Lambda runs it and
 * where Lambda runs it, as far as this machine can reproduce that (test/helpers/lambda-sandbox.ts:
 * the function's runtime's Node.js, not root, no capabilities, a read-only file system but /tmp,
 * no /dev/shm, HOME=/tmp, the function's memory size as a cgroup limit and its CPU share as a CPU
 * quota). The suite's name says which Node.js ran it. A renderer-only variant of bundle-smoke.test.ts:
 * the tests invoke it directly with render requests, a local server standing in for the
 * presigned S3 PUT.
 *
 * Two renderer processes: the default process model (auto, which proves multi-process at init and
 * keeps it here) and single-process (RENDERER_PROCESS_MODEL=single). In each: PDFs, the process
 * model reported, isolation between accounts, and a flooding page answered within its deadline.
 *
 * The render queue consumer's bundle too (the same layer, its own memory size): fed async jobs of
 * a local stack by the event source mapping's stand-in, it renders them as nobody, within its
 * memory limit, reaching the stack's DynamoDB, S3 and SQS endpoints on loopback.
 *
 * Needs root (mount namespaces, setpriv, cgroups). Elsewhere the file fails, saying so, unless
 * the run opts out with LAMBDA_SANDBOX=skip: then its tests are skipped, and .ci/run's closing
 * lines name each skipped test. A tier that did not run is never mistaken for one that passed.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse } from 'aws-lambda';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryRenderer } from '../../functions/adapters/memory/renderer.js';
import { batchOutputs, renderWorker } from '../../functions/consumers.js';
import { buildCii } from '../../functions/core/e-invoice/build.js';
import { markOf } from '../../functions/domain/renders/marks.js';
import { protectionOf } from '../../functions/domain/renders/protection.js';
import { signatureOf } from '../../functions/domain/renders/signature.js';
import type { RenderRequest } from '../../functions/renderer/contract.js';
import { CHROMIUM_PACK } from '../../functions/wiring.js';
import { type Poller, startPoller } from '../../lib/local/sqs/poller.js';
import { queueArn } from '../../lib/local/sqs/queues.js';
import {
  LOCAL_BATCH_OUTPUT_QUEUE,
  LOCAL_CREDENTIALS,
  LOCAL_RENDER_QUEUE,
  type LocalStack,
  startLocalStack,
} from '../../lib/local/stack.js';
import { SERVICE_RUNTIME } from '../../lib/service-function.js';
import { validInvoice } from '../fixtures/e-invoice.js';
import { multilingualHtml } from '../fixtures/multilingual.js';
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
import { type KmsApi, startKmsApi } from '../helpers/kms-api.js';
import { canSandbox, lambdaNode, MEMORY_MIB_PER_VCPU, NOBODY } from '../helpers/lambda-sandbox.js';
import { createApi, createTempDataDir, putAccountOnPlan } from '../helpers/local-stack.js';
import { KINDS, pageOf, seesLateFetch, servePageRequests, WAITS } from '../helpers/page-load-cells.js';
import { readPdf } from '../helpers/pdf.js';
import {
  onPdf,
  pdfdetachList,
  pdffonts,
  pdfinfoMeta,
  pdfText,
  qpdfEncryption,
} from '../helpers/pdf-readers.js';
import { descendantsOf } from '../helpers/process-tree.js';
import { certificateFor } from '../helpers/signing-keys.js';
import { FOUND_NOTHING, startTenantFixture, type TenantFixture, WROTE } from '../helpers/tenant-fixture.js';
import { describeBound, type PaceBound, paceBound } from '../helpers/timing.js';

const uploads = new Map<string, Buffer>();
const uploadServer = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    uploads.set(req.url ?? '', Buffer.concat(chunks));
    res.writeHead(200).end();
  });
});

/** What the page-load matrix's pages ask for (images, a late fetch). */
const pageServer = createServer(servePageRequests);

/** The processes descended from `root`, with the user they run as and their command line. */
const family = (root: number): { pid: number; uid: number; args: string }[] => {
  const all: { pid: number; ppid: number; uid: number; args: string }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const status = readFileSync(`/proc/${entry}/status`, 'utf8');
      all.push({
        pid: Number(entry),
        ppid: Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]),
        uid: Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]),
        args: readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' '),
      });
    } catch {
      // gone meanwhile
    }
  }
  return descendantsOf(root, all);
};

// The runtime the stack gives its functions, resolved to the Node.js binary the sandbox runs
// (fetched once from the npm registry, then cached): the suite is named after what it really ran.
const sandboxed = canSandbox();
/** The explicit opt-out of a machine that cannot build the sandbox (not root, no unshare/setpriv). */
const OPT_OUT = 'LAMBDA_SANDBOX';
const optedOut = process.env[OPT_OUT] === 'skip';
const node = sandboxed ? lambdaNode(SERVICE_RUNTIME.name) : undefined;
const runtimeLabel = node
  ? `${node.runtime}, node ${node.version}`
  : `SKIPPED: this machine cannot build the sandbox (needs root, unshare and setpriv), ${OPT_OUT}=skip`;

// Declared only where it fails: a describe that is skipped where the sandbox runs would be counted
// and named as a skipped test in every run that did run the sandbox.
if (!sandboxed && !optedOut) {
  describe('the Lambda-like sandbox', () => {
    it('can be built on this machine, or the run says it skips it', () => {
      expect.fail(
        'the Lambda-like sandbox needs root, unshare and setpriv, which this machine lacks: run as root, ' +
          `or set ${OPT_OUT}=skip to skip this file's tests (they are then counted and named as skipped)`,
      );
    });
  });
}

/** One bundled synth for the file (esbuild and the layer take a while), shared by both suites. */
let bundled: Promise<{ outdir: string; s: Synthesized }> | undefined;
const bundledSynth = () => {
  // The run's one bundled synth (bundled-synth.ts), run from a work directory of this file's own.
  bundled ??= mkdtemp(join(tmpdir(), 'cdk-lambda-sandbox-')).then(async (outdir) => ({
    outdir,
    s: await synthBundled(),
  }));
  return bundled;
};
afterAll(async () => {
  const done = await bundled?.catch(() => undefined);
  if (done) await rm(done.outdir, { recursive: true, force: true });
});

describe.skipIf(!sandboxed)(`the renderer bundle in a Lambda-like sandbox (${runtimeLabel})`, () => {
  let outdir: string;
  let renderer: BundledFunction;
  let uploadBase: string;
  let fixture: TenantFixture;
  let pageHost = '';
  const processes = new Map<'auto' | 'single', LambdaProcess>();
  let uploadCount = 0;
  /** AWS KMS's API, served from its memory stand-in: the bundle's KMS client signs through it. */
  let kmsApi: KmsApi;
  let fontBucket: FontBucket;

  beforeAll(async () => {
    const hookStarted = performance.now();
    const { outdir: synthDir, s } = await bundledSynth();
    outdir = synthDir;
    renderer = bundledFunction(s, s.stack.renderer.function);
    await new Promise<void>((resolve) => uploadServer.listen(0, '127.0.0.1', () => resolve()));
    uploadBase = `http://127.0.0.1:${(uploadServer.address() as AddressInfo).port}`;
    fixture = await startTenantFixture();
    await new Promise<void>((resolve) => pageServer.listen(0, '127.0.0.1', () => resolve()));
    pageHost = `127.0.0.1:${(pageServer.address() as AddressInfo).port}`;
    kmsApi = await startKmsApi();
    // The CJK fonts' bucket (in the cloud, the S3 assets the template names): an s3rver on loopback.
    fontBucket = await startFontBucket(renderer.environment);
    console.info(
      `sandbox: synthesized, servers up, font bucket filled at ${Math.round(performance.now() - hookStarted)} ms`,
    );
    const start = (model: 'auto' | 'single') =>
      startLambdaProcess(renderer, {
        functionName: `pdf-render-service-renderer-${model}`,
        workDir: outdir,
        sandbox: true,
        environment: {
          AWS_REGION: 'eu-west-1',
          // The role's credentials, as Lambda sets them, and KMS's endpoint (its stand-in).
          AWS_ACCESS_KEY_ID: 'ASIASANDBOXRENDERER',
          AWS_SECRET_ACCESS_KEY: 'sandbox-secret-access-key',
          AWS_SESSION_TOKEN: 'sandbox-session-token',
          AWS_ENDPOINT_URL_KMS: kmsApi.endpoint,
          ...resolveEnvironment(renderer, fontBucket.environment),
          // s3rver's credentials (KMS's stand-in takes any).
          ...fontBucket.environment,
          RENDERER_EGRESS_ALLOW_HOSTS: `${fixture.hostPort},${pageHost}`,
          ...(model === 'single' ? { RENDERER_PROCESS_MODEL: 'single' } : {}),
        },
      });
    const [auto, single] = await Promise.all([start('auto'), start('single')]);
    processes.set('auto', auto);
    processes.set('single', single);
    console.info(`sandbox: both renderers started at ${Math.round(performance.now() - hookStarted)} ms`);
    // A real bundling (esbuild, the layer; once per run) and two starts at the function's CPU share (1.16 vCPU):
    // on a shared 2-core machine that outlasts the default hook timeout (and 300 s at load 25).
  }, 600_000);

  afterEach((context) => {
    if (context.task.result?.state !== 'fail') return;
    for (const [model, p] of processes) console.error(`--- renderer (${model}) log:\n${p.logs()}`);
  });

  afterAll(async () => {
    await Promise.all([...processes.values()].map((p) => p.close()));
    uploadServer.closeAllConnections();
    uploadServer.close();
    pageServer.closeAllConnections();
    pageServer.close();
    fixture?.close();
    await kmsApi?.close();
    await fontBucket?.close();
  });

  const request = (
    jobId: string,
    html: string,
    pageLoad: Partial<RenderRequest['pageLoad']> = {},
  ): RenderRequest => ({
    jobId,
    template: { source: html, variables: {} },
    pdf: {
      format: 'A4',
      landscape: false,
      printBackground: true,
      margins: { top: 0.4, right: 0.4, bottom: 0.4, left: 0.4 },
    },
    pageLoad: { waitUntil: 'load', timeoutMs: 10_000, waitForSelector: null, ...pageLoad },
    upload: { url: `${uploadBase}/sandbox-${++uploadCount}.pdf`, headers: {} },
    limits: { maxPdfBytes: 50 * 1024 * 1024, maxPages: 1000, maxHtmlBytes: 10 * 1024 * 1024 },
  });

  /** Invokes the renderer as the pdf function does; the PDF's text when it printed one. */
  const invoke = async (model: 'auto' | 'single', req: RenderRequest) => {
    const target = processes.get(model);
    if (!target) throw new Error(`no ${model} renderer`);
    const started = performance.now();
    const { payload, functionError } = await target.invoke(req);
    const ms = performance.now() - started;
    expect(functionError, JSON.stringify(payload)).toBeUndefined();
    const stored = uploads.get(new URL(req.upload.url).pathname);
    const text = stored ? (await readPdf(stored)).text.replace(/\s+/g, ' ') : '';
    return { result: payload, text, ms };
  };

  it.each(['auto', 'single'] as const)(
    'runs %s as Lambda would: not root, read-only but /tmp, no /dev/shm, its memory limit',
    async (model) => {
      const p = processes.get(model) as LambdaProcess;
      const pid = p.pid as number;
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      expect(/^Uid:\s+(\d+)/m.exec(status)?.[1]).toBe(String(NOBODY));
      expect(/^CapEff:\s+(\w+)/m.exec(status)?.[1]).toBe('0000000000000000');
      expect(/^NoNewPrivs:\s+(\d)/m.exec(status)?.[1]).toBe('1');
      const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      expect(environ).toContain('HOME=/tmp');
      // Its view of the file system: / read-only, /tmp writable, no /dev/shm.
      const mounts = readFileSync(`/proc/${pid}/mountinfo`, 'utf8').split('\n');
      const optionsOf = (point: string) => mounts.find((m) => m.split(' ')[4] === point)?.split(' ')[5] ?? '';
      expect(optionsOf('/')).toMatch(/^ro\b/);
      expect(optionsOf('/var/task')).toMatch(/^ro\b/);
      expect(optionsOf('/opt')).toMatch(/^ro\b/);
      expect(optionsOf('/tmp')).toMatch(/^rw\b/);
      await expect(readdir(`/proc/${pid}/root/dev`)).resolves.not.toContain('shm');
      expect(p.sandbox?.memoryLimitBytes).toBe(renderer.memorySizeMiB * 1024 * 1024);
      // The function's runtime, not the Node.js running these tests; its CPU share, as Lambda's.
      expect(renderer.runtime).toBe(SERVICE_RUNTIME.name);
      expect(p.sandbox?.lambdaNode.version).toBe(node?.version);
      expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0]).toBe('/var/lang/bin/node');
      expect(p.sandbox?.cpuLimit).toContain((renderer.memorySizeMiB / MEMORY_MIB_PER_VCPU).toFixed(2));

      const { result, text } = await invoke(
        model,
        request('job_sandbox_hello', '<h1>Hello from the sandbox</h1>'),
      );
      expect(result).toMatchObject({ ok: true, pageCount: 1 });
      expect(text).toContain('Hello from the sandbox');
      // Chromium runs there too, as the same user.
      const chromium = family(pid).filter((c) => c.args.includes('chromium'));
      expect(chromium.length).toBeGreaterThan(0);
      expect(new Set(chromium.map((c) => c.uid))).toEqual(new Set([NOBODY]));
      expect(chromium.some((c) => c.args.includes('--single-process'))).toBe(model === 'single');
    },
  );

  it('starts Chromium unpacked from the layer, inflating nothing; a CJK page after the cold start fetches its fonts from the bucket and prints them (issue 42)', async () => {
    // The layer as synthesized: no brotli archive, Chromium executable as it is, no CJK font.
    const layer = renderer.layerDirs[0] as string;
    const files = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)],
      );
    expect(files(layer).filter((f) => f.endsWith('.br'))).toEqual([]);
    expect(statSync(join(layer, CHROMIUM_PACK.dir, CHROMIUM_PACK.binary)).mode & 0o111).toBe(0o111);
    expect(files(join(layer, 'fonts')).filter((f) => /NotoSans(SC|TC|JP|KR)_/.test(f))).toEqual([]);
    const logged = (p: LambdaProcess, message: string) =>
      p
        .logs()
        .split('\n')
        .filter((l) => l.includes(`"${message}"`))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    for (const model of ['auto', 'single'] as const) {
      const p = processes.get(model) as LambdaProcess;
      expect(
        (await invoke(model, request(`job_sandbox_unpacked_${model}`, '<p>unpacked</p>'))).result,
      ).toMatchObject({ ok: true });
      // Nothing inflated, nothing fetched for a Latin page.
      expect(logged(p, 'chromium-unpacked')).toEqual([]);
      expect(logged(p, 'fonts-fetched')).toEqual([]);
      const tmp = await readdir(`/proc/${p.pid}/root/tmp`);
      for (const inflated of ['chromium', 'chromium-pack', 'al2023']) expect(tmp).not.toContain(inflated);
      const browser = family(p.pid as number).filter((c) =>
        c.args.startsWith(`/opt/${CHROMIUM_PACK.dir}/${CHROMIUM_PACK.binary} `),
      );
      expect(browser.length, model).toBeGreaterThan(0);
    }
    // A page in every script: its four CJK fonts fetched (once each), Chromium relaunched to see
    // them, each script printed with its own font.
    const auto = processes.get('auto') as LambdaProcess;
    const scripts = request('job_sandbox_scripts', multilingualHtml());
    const { result, text } = await invoke('auto', scripts);
    expect(result).toMatchObject({ ok: true });
    // pdftotext reads some Han through the fonts' radicals (文 as ⽂): the Hangul line is exact.
    expect(text).toContain('한국어 청구서와 영수증');
    const pdf = uploads.get(new URL(scripts.upload.url).pathname) as Buffer;
    const fonts = (await pdffonts(pdf)).map((f) => f.name.replace(/^[A-Z]{6}\+/, ''));
    for (const font of [
      'NotoSansJP-Regular',
      'NotoSansSC-Regular',
      'NotoSansTC-Regular',
      'NotoSansKR-Regular',
      'NotoSansArabic-Regular',
    ]) {
      expect(fonts, font).toContain(font);
    }
    expect(
      logged(auto, 'fonts-fetched')
        .map((l) => l.family)
        .sort(),
    ).toEqual(['Noto Sans JP', 'Noto Sans KR', 'Noto Sans SC', 'Noto Sans TC']);
    expect(
      logged(auto, 'browser-retired').filter((l) => String(l.reason).includes('fetched fonts')),
    ).toHaveLength(1);
    // The next CJK page fetches nothing and prints with them at once.
    const again = request('job_sandbox_scripts_again', '<p lang="ja">請求書：お支払いは月末までに</p>');
    expect((await invoke('auto', again)).result).toMatchObject({ ok: true });
    expect(logged(auto, 'fonts-fetched')).toHaveLength(4);
    const againFonts = await pdffonts(uploads.get(new URL(again.upload.url).pathname) as Buffer);
    expect(againFonts.map((f) => f.name.replace(/^[A-Z]{6}\+/, ''))).toContain('NotoSansJP-Regular');
    // Single-process: a Japanese page fetches Noto Sans JP only, and prints with it.
    const single = processes.get('single') as LambdaProcess;
    const japanese = request('job_sandbox_japanese', '<p lang="ja">請求書：お支払いは月末までに</p>');
    const printed = await invoke('single', japanese);
    expect(printed.result).toMatchObject({ ok: true });
    // The kana exactly (pdftotext reads some Han through radicals: 支 as ⽀).
    expect(printed.text).toContain('払いは');
    expect(printed.text).toContain('までに');
    expect(logged(single, 'fonts-fetched').map((l) => l.family)).toEqual(['Noto Sans JP']);
    const jpFonts = await pdffonts(uploads.get(new URL(japanese.upload.url).pathname) as Buffer);
    expect(jpFonts.map((f) => f.name.replace(/^[A-Z]{6}\+/, ''))).toContain('NotoSansJP-Regular');
  });

  it('renders a batch run whose items need fetched fonts each on its own: every Korean item prints in Noto Sans KR, fetched once (issues 42 and 43)', async () => {
    // After the test above, the single-process renderer has fetched Noto Sans JP only.
    const single = processes.get('single') as LambdaProcess;
    const items = [1, 2, 3].map((n) =>
      request(`job_sandbox_run_kr_${n}`, `<p lang="ko">청구서 ${n}번: 영수증</p>`),
    );
    const { payload, functionError } = await single.invoke({
      run: { requests: items, sliceMs: 30_000, batch: 'acc_sandbox/bat_sandbox' },
    });
    expect(functionError, JSON.stringify(payload)).toBeUndefined();
    expect((payload as { results: unknown[] }).results).toEqual(
      items.map(() => expect.objectContaining({ ok: true })),
    );
    const fetched = single
      .logs()
      .split('\n')
      .filter((l) => l.includes('"fonts-fetched"'))
      .map((l) => (JSON.parse(l) as { family: string }).family);
    expect(fetched.filter((f) => f === 'Noto Sans KR')).toHaveLength(1);
    for (const [n, item] of items.entries()) {
      const pdf = uploads.get(new URL(item.upload.url).pathname) as Buffer;
      const fonts = (await pdffonts(pdf)).map((f) => f.name.replace(/^[A-Z]{6}\+/, ''));
      expect(fonts, item.jobId).toContain('NotoSansKR-Regular');
      expect((await readPdf(pdf)).text.replace(/\s+/g, ' ')).toContain(`청구서 ${n + 1}번`);
    }
  });

  it("finishes a PDF in the bundle: a templated stamp in the layer's fonts, a watermark, AES-256 (issue 34)", async () => {
    const req: RenderRequest = {
      ...request('job_sandbox_finished', '<h1>Finished in the sandbox</h1>'),
      template: { source: '<h1>Finished in the sandbox</h1>', variables: { paid_on: '2026-11-28' } },
      stamp: markOf({ text: 'PAID {{ paid_on }} 支払済' }, 'stamp'),
      watermark: markOf({ text: 'COPY', rotation_deg: 0 }, 'watermark'),
      protection: protectionOf({ owner_password: 'Sandbox-Owner-Pw-1', user_password: 'sandbox-user' }),
    };
    const target = processes.get('auto') as LambdaProcess;
    const { payload, functionError } = await target.invoke(req);
    expect(functionError, JSON.stringify(payload)).toBeUndefined();
    expect(payload).toMatchObject({ ok: true, pageCount: 1 });
    const stored = uploads.get(new URL(req.upload.url).pathname) as Uint8Array;
    expect((await qpdfEncryption(stored, 'sandbox-user')).stdout).toMatch(/^R = 6$/m);
    const text = await pdfText(stored, { userPassword: 'sandbox-user' });
    expect(text.stdout).toContain('PAID 2026-11-28 支払済');
    expect(text.stdout).toContain('COPY');
    expect(text.stdout).toContain('Finished in the sandbox');
  });

  it('signs a PDF in the bundle with an uploaded key: PAdES, visible, pdfsig says valid (issue 34)', async () => {
    // An ECDSA P-256 key and its self-signed certificate, as an account uploads them (PEM).
    const keyDir = await mkdtemp(join(tmpdir(), 'sandbox-signer-'));
    try {
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'ec',
          '-pkeyopt',
          'ec_paramgen_curve:P-256',
          '-nodes',
          '-days',
          '2',
          '-subj',
          '/CN=Sandbox Signer',
          '-keyout',
          join(keyDir, 'k.pem'),
          '-out',
          join(keyDir, 'c.pem'),
        ],
        { stdio: 'ignore' },
      );
      const signature = signatureOf({
        key_id: 'sk_sandbox',
        reason: 'Signed in the sandbox',
        appearance: { page: 1, x: 36, y: 36, width: 220, height: 60 },
      });
      const req: RenderRequest = {
        ...request('job_sandbox_signed', '<h1>Signed in the sandbox</h1>'),
        signature,
        signingKey: {
          kind: 'uploaded',
          algorithm: 'ECDSA',
          certificatePem: readFileSync(join(keyDir, 'c.pem'), 'utf8'),
          privateKeyPem: readFileSync(join(keyDir, 'k.pem'), 'utf8'),
        },
      };
      const target = processes.get('auto') as LambdaProcess;
      const { payload, functionError } = await target.invoke(req);
      expect(functionError, JSON.stringify(payload)).toBeUndefined();
      expect(payload).toMatchObject({ ok: true, pageCount: 1 });
      const stored = uploads.get(new URL(req.upload.url).pathname) as Uint8Array;
      const report = await onPdf(stored, 'pdfsig', (f) => [f]);
      expect(`${report.stdout}${report.stderr}`).toContain('Signature Validation: Signature is Valid.');
      expect(`${report.stdout}${report.stderr}`).toContain('Sandbox Signer');
      // The key is nowhere in the function's answer.
      expect(JSON.stringify(payload)).not.toContain('PRIVATE KEY');
    } finally {
      await rm(keyDir, { recursive: true, force: true });
    }
  });

  /** A KMS key of the stand-in, and the certificate an account registers with it. */
  const kmsKeyWithCertificate = async (algorithm: 'RSA' | 'ECDSA', subject: string) => {
    const { arn, privateKey } = kmsApi.kms.createKey(algorithm);
    return { arn, certificatePem: await certificateFor(privateKey, `/CN=${subject}`) };
  };

  it('signs a PDF in the bundle with a KMS key: the bundle asks KMS to sign the signed attributes only, pdfsig says valid (issue 34)', async () => {
    const { arn, certificatePem } = await kmsKeyWithCertificate('RSA', 'Sandbox KMS Signer');
    const signature = signatureOf({ key_id: 'sk_sandbox_kms', reason: 'Signed by KMS in the sandbox' });
    const req: RenderRequest = {
      ...request('job_sandbox_kms', '<h1>Signed by KMS in the sandbox</h1>'),
      signature,
      signingKey: { kind: 'kms', algorithm: 'RSA', certificatePem, kmsKeyArn: arn },
    };
    const before = kmsApi.signCalls.length;
    const target = processes.get('auto') as LambdaProcess;
    const { payload, functionError } = await target.invoke(req);
    expect(functionError, JSON.stringify(payload)).toBeUndefined();
    expect(payload).toMatchObject({ ok: true, pageCount: 1 });
    const stored = uploads.get(new URL(req.upload.url).pathname) as Uint8Array;
    const report = await onPdf(stored, 'pdfsig', (f) => [f]);
    expect(`${report.stdout}${report.stderr}`).toContain('Signature Validation: Signature is Valid.');
    expect(`${report.stdout}${report.stderr}`).toContain('Sandbox KMS Signer');
    // One Sign call, for this key, of a RAW message a few hundred bytes long: never the document.
    const calls = kmsApi.signCalls.slice(before);
    expect(calls.map((c) => [c.keyId, c.messageType, c.signingAlgorithm])).toEqual([
      [arn, 'RAW', 'RSASSA_PKCS1_V1_5_SHA_256'],
    ]);
    expect(calls[0]?.message.length).toBeLessThan(2048);
  });

  it('fails a render cleanly when KMS refuses the key, naming no key, uploading nothing (issue 34)', async () => {
    const { arn, certificatePem } = await kmsKeyWithCertificate('ECDSA', 'Sandbox KMS Gone');
    const gone = `${arn.slice(0, -4)}0000`;
    const signature = signatureOf({ key_id: 'sk_sandbox_gone', reason: 'Never signed' });
    const req: RenderRequest = {
      ...request('job_sandbox_kms_refused', '<h1>Not signed</h1>'),
      signature,
      signingKey: { kind: 'kms', algorithm: 'ECDSA', certificatePem, kmsKeyArn: gone },
    };
    const before = kmsApi.signCalls.length;
    const target = processes.get('auto') as LambdaProcess;
    const { payload, functionError } = await target.invoke(req);
    expect(functionError, JSON.stringify(payload)).toBeUndefined();
    expect(payload).toMatchObject({ ok: false });
    // KMS was asked, and refused: the answer names neither the key nor its ARN.
    expect(kmsApi.signCalls.slice(before).map((c) => c.keyId)).toEqual([gone]);
    expect(JSON.stringify(payload)).not.toContain(gone);
    expect(JSON.stringify(payload)).not.toContain('key/');
    expect(uploads.has(new URL(req.upload.url).pathname)).toBe(false);
  });

  it('finishes a PDF/A-3b with its e-invoice embedded in the sandbox (the bundle’s pdf-lib)', async () => {
    const xml = buildCii(validInvoice(), 'en16931');
    const req = {
      ...request('job_sandbox_einvoice', '<h1>Invoice in the sandbox</h1>'),
      pdf_a: '3b' as const,
      e_invoice: { standard: 'factur-x' as const, profile: 'en16931' as const, xml },
    };
    const { result, text } = await invoke('auto', req);
    expect(result).toMatchObject({ ok: true, pageCount: 1 });
    expect(text).toContain('Invoice in the sandbox');
    const stored = new Uint8Array(uploads.get(new URL(req.upload.url).pathname) ?? []);
    expect(await pdfdetachList(stored)).toEqual(['factur-x.xml']);
    expect(await pdfinfoMeta(stored)).toMatch(/<pdfaid:part>3<\/pdfaid:part>/);
  });

  it.each([
    ['auto', 'multi'],
    ['single', 'single'],
  ] as const)(
    '%s reports the process model it runs in: a log line and a metric (%s)',
    async (model, expected) => {
      const lines = (processes.get(model) as LambdaProcess)
        .logs()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(lines.find((l) => l.message === 'browser-process-model')).toMatchObject({
        level: 'INFO',
        processModel: expected,
        setting: model,
      });
      expect(lines.find((l) => 'BrowserProcessModel' in l)).toMatchObject({
        BrowserProcessModel: 1,
        ProcessModel: expected,
        _aws: { CloudWatchMetrics: [expect.objectContaining({ Namespace: 'PdfRenderService' })] },
      });
    },
  );

  it.each(['auto', 'single'] as const)(
    "%s: account B's render finds nothing account A's page stored",
    async (model) => {
      const before = { ...fixture.hits };
      fixture.seen.length = 0;
      const a = await invoke(
        model,
        request('job_sandbox_a', fixture.page('/write'), { waitForSelector: '#done' }),
      );
      expect(a.result).toMatchObject({ ok: true });
      expect(a.text).toContain(WROTE);
      expect(fixture.seen).toContain('/cached cookie=tenant=a');

      fixture.seen.length = 0;
      const b = await invoke(
        model,
        request('job_sandbox_b', fixture.page('/read'), { waitForSelector: '#done' }),
      );
      expect(b.result).toMatchObject({ ok: true });
      expect(b.text).toContain(FOUND_NOTHING);
      expect(fixture.hits).toEqual({ cached: before.cached + 2, image: before.image + 2 });
      expect(fixture.seen.filter((l) => l.includes('tenant='))).toEqual([]);
    },
  );

  it.each(['auto', 'single'] as const)(
    '%s: a page firing 20,000 blocked requests answers within its deadline',
    async (model) => {
      // The control: an ordinary render in the same sandbox, under the same CPU quota.
      const control = await invoke(model, request('job_sandbox_control', '<p>control</p>'));
      expect(control.result).toMatchObject({ ok: true });
      const flood = `<p>flood</p><script>for (let i = 0; i < 20000; i++) new Image().src = 'http://10.0.0.1/' + i;</script>`;
      const { result, ms } = await invoke(model, request('job_sandbox_flood', flood, { timeoutMs: 10_000 }));
      expect(result).toMatchObject({ ok: false, code: 'PDF_RENDERING_FAILED' });
      // Within its 10 s deadline, plus 3 s, or 5 ordinary renders of this run when that is more.
      const bound: PaceBound = { expectedMs: 10_000, slackMs: 3_000, controlMs: control.ms, factor: 5 };
      expect(ms, describeBound(ms, bound)).toBeLessThan(paceBound(bound));
      const after = await invoke(model, request('job_sandbox_after', '<p>after the flood</p>'));
      expect(after.result).toMatchObject({ ok: true });
      expect(after.text).toContain('after the flood');
      // Both renderers stayed within the function's memory, and say how close they came.
      const peak = processes.get(model)?.sandbox?.peakMemoryBytes() ?? 0;
      expect(peak).toBeGreaterThan(0);
      expect(peak).toBeLessThan(renderer.memorySizeMiB * 1024 * 1024);
    },
  );

  /**
   * Lambda freezes a function's sandbox between invocations, the spare page the renderer opened
   * after the last one included; a warm but idle Lambda's first render comes on that page after
   * the thaw (issue 32). Every wait on every page, each after its own freeze: SIGSTOP to the
   * renderer's process and all of Chromium's, then SIGCONT.
   */
  it('auto: every wait on every page renders on the spare after the sandbox was frozen and thawed', async () => {
    const lambda = processes.get('auto') as LambdaProcess;
    const signalAll = (signal: NodeJS.Signals): void => {
      const pids = [lambda.pid as number, ...family(lambda.pid as number).map((p) => p.pid)];
      for (const pid of new Set(pids)) {
        try {
          process.kill(pid, signal);
        } catch {
          // gone meanwhile
        }
      }
    };
    // The spare is opened after this render: every cell's session waited, frozen, since the last.
    // Its deadline is generous: run alone (-t), it is the sandbox's first render, at its CPU share.
    const warm = await invoke(
      'auto',
      request('job_sandbox_freeze_warm', '<p>warm</p>', { timeoutMs: 60_000 }),
    );
    expect(warm.result).toMatchObject({ ok: true });
    for (const wait of WAITS) {
      for (const kind of KINDS) {
        const cell = `freeze-${wait}-${kind}`;
        await new Promise((r) => setTimeout(r, 1_000)); // the spare goes quiet (Chromium's 0.5 s window)
        signalAll('SIGSTOP');
        await new Promise((r) => setTimeout(r, 2_000));
        signalAll('SIGCONT');
        const html = pageOf(kind, pageHost, cell);
        const pageLoad =
          wait === 'selector'
            ? { waitForSelector: '#ready', timeoutMs: 15_000 }
            : { waitUntil: wait, timeoutMs: 15_000 };
        const req = request(`job_sandbox_${cell}`, html, pageLoad);
        const { result, text } = await invoke('auto', {
          ...req,
          template: { source: html, variables: { cell } },
        });
        expect(result, cell).toMatchObject({ ok: true });
        expect(text, cell).toContain(cell);
        if (kind === 'late-fetch' && seesLateFetch(wait)) expect(text, cell).toContain('late: fetched');
      }
    }
  }, 180_000);
});

describe.skipIf(!sandboxed)(
  `the render queue consumer and the async renderer bundles in Lambda-like sandboxes (${runtimeLabel})`,
  () => {
    let worker: BundledFunction;
    let asyncRenderer: BundledFunction;
    let workerProcess: LambdaProcess;
    let rendererProcess: LambdaProcess;
    let local: LocalStack;
    let asyncFontBucket: FontBucket;
    let dataDir: string;
    let sqs: SQSClient;
    let poller: Poller;

    beforeAll(async () => {
      const { outdir, s } = await bundledSynth();
      worker = bundledFunction(s, s.stack.consumer(renderWorker.name).function);
      asyncRenderer = bundledFunction(s, s.stack.asyncRenderer.function);
      dataDir = await createTempDataDir();
      // The stack's API queues the jobs; its own consumer stays off (the sandboxed bundle is the
      // consumer), and so does its Chromium (a renderer that is never called).
      local = await startLocalStack({
        port: 0,
        dataDir,
        quiet: true,
        asyncConsumer: false,
        renderer: {
          render: () => Promise.reject(new Error('the sandboxed async renderer renders, not the stack')),
        },
      });
      asyncFontBucket = await startFontBucket(asyncRenderer.environment);
      rendererProcess = await startLambdaProcess(asyncRenderer, {
        functionName: 'pdf-render-service-async-renderer',
        workDir: outdir,
        sandbox: true,
        environment: {
          ...resolveEnvironment(asyncRenderer, asyncFontBucket.environment),
          ...asyncFontBucket.environment,
        },
      });
      workerProcess = await startLambdaProcess(worker, {
        functionName: 'pdf-render-service-render-worker',
        workDir: outdir,
        sandbox: true,
        environment: {
          AWS_REGION: local.region,
          AWS_ACCESS_KEY_ID: local.handlerEnv.AWS_ACCESS_KEY_ID as string,
          AWS_SECRET_ACCESS_KEY: local.handlerEnv.AWS_SECRET_ACCESS_KEY as string,
          // No job here names a webhook endpoint: the webhook queue's URL is a stand-in. The API-key
          // secret (it unseals a protection's passwords in orders): the local stack's stands in.
          ...resolveEnvironment(worker, {
            ...local.handlerEnv,
            ...apiKeySecretStandIn(local.handlerEnv).standIns,
            WEBHOOK_QUEUE_URL: 'http://127.0.0.1:9/000000000000/webhooks',
            RENDERER_FUNCTION_NAME: rendererProcess.functionName,
          }),
          ...apiKeySecretStandIn(local.handlerEnv).environment,
          DYNAMODB_ENDPOINT: local.dynamoDbEndpoint,
          S3_ENDPOINT: local.s3Endpoint,
          AWS_ENDPOINT_URL_SQS: local.sqsEndpoint,
          LAMBDA_ENDPOINT: rendererProcess.endpoint,
          POWERTOOLS_LOG_LEVEL: 'ERROR',
        },
      });
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
          const { payload, functionError } = await workerProcess.invoke(event);
          if (functionError) throw new Error(`render-worker: ${functionError}: ${JSON.stringify(payload)}`);
          return payload as SQSBatchResponse;
        },
      });
    }, 300_000);

    afterEach((context) => {
      if (context.task.result?.state !== 'fail') return;
      console.error(`--- render-worker log:\n${workerProcess?.logs()}`);
      console.error(`--- async renderer log:\n${rendererProcess?.logs()}`);
    });

    afterAll(async () => {
      await asyncFontBucket?.close();
      await poller?.stop();
      sqs?.destroy();
      await workerProcess?.close();
      await rendererProcess?.close();
      await local?.close();
      if (dataDir) await rm(dataDir, { recursive: true, force: true });
    });

    it('renders queued async jobs as nobody, each function within its memory limit, Chromium only in the renderer', async () => {
      for (const [p, fn] of [
        [workerProcess, worker],
        [rendererProcess, asyncRenderer],
      ] as const) {
        const status = readFileSync(`/proc/${p.pid}/status`, 'utf8');
        expect(/^Uid:\s+(\d+)/m.exec(status)?.[1]).toBe(String(NOBODY));
        expect(p.sandbox?.memoryLimitBytes).toBe(fn.memorySizeMiB * 1024 * 1024);
      }
      const api = createApi(local.baseUrl);
      const token = await local.issueToken({ sub: 'sandbox-async', email: 'sandbox-async@example.com' });
      // A report of a few dozen pages, as a large async job would be (smaller: the sandbox's CPU is shared).
      const res = await api('/v1/pdf', {
        method: 'POST',
        token,
        body: {
          html: '{% for i in range(1500) %}<p>Row {{ i }}: {{ "%.2f"|format(i * 1.5) }}</p>{% endfor %}',
          async: true,
        },
      });
      expect(res.status, res.text).toBe(202);
      const job = await waitForJob(api, token, res.json.id, 120_000);
      expect(job).toMatchObject({ status: 'completed', attempts: 1 });
      expect(job.page_count).toBeGreaterThan(20);
      const pdf = await readPdf(new Uint8Array(await (await fetch(job.download_url)).arrayBuffer()));
      expect(pdf.pageCount).toBe(job.page_count);
      expect(pdf.text).toContain('Row 1499: 2248.50');
      // Chromium ran in the renderer's sandbox, as nobody; the consumer, which holds the table's and
      // the bucket's permissions, started none.
      const chromium = family(rendererProcess.pid as number).filter((c) => c.args.includes('chromium'));
      expect(chromium.length).toBeGreaterThan(0);
      expect(new Set(chromium.map((c) => c.uid))).toEqual(new Set([NOBODY]));
      expect(family(workerProcess.pid as number).filter((c) => c.args.includes('chromium'))).toEqual([]);
      for (const [name, p, fn] of [
        ['render-worker', workerProcess, worker],
        ['async renderer', rendererProcess, asyncRenderer],
      ] as const) {
        const peak = p.sandbox?.peakMemoryBytes() ?? 0;
        console.info(
          `${name} in the sandbox: ${job.page_count} pages, peak ${(peak / 2 ** 20).toFixed(0)} MiB of ${fn.memorySizeMiB}`,
        );
        expect(peak).toBeGreaterThan(0);
        expect(peak).toBeLessThan(fn.memorySizeMiB * 1024 * 1024);
      }
    });
  },
);

/** Items of the batch whose outputs the sandboxed consumer builds: the most a batch may have. */
const OUTPUT_ITEMS = 1000;

describe.skipIf(!sandboxed)(
  `the batch output consumer's bundle in a Lambda-like sandbox, ${OUTPUT_ITEMS} items (${runtimeLabel})`,
  () => {
    let builder: BundledFunction;
    let builderProcess: LambdaProcess;
    let local: LocalStack;
    let dataDir: string;
    let sqs: SQSClient;
    let poller: Poller;

    beforeAll(async () => {
      const { outdir, s } = await bundledSynth();
      builder = bundledFunction(s, s.stack.consumer(batchOutputs.name).function);
      dataDir = await createTempDataDir();
      // The items are rendered by the memory renderer (2-page, 11.6 KB PDFs, about an invoice's
      // size): what is measured is the consumer, which reads them all, not Chromium.
      local = await startLocalStack({
        port: 0,
        dataDir,
        quiet: true,
        renderer: createMemoryRenderer(),
        skipConsumers: [batchOutputs.name],
      });
      builderProcess = await startLambdaProcess(builder, {
        functionName: 'pdf-render-service-batch-outputs',
        workDir: outdir,
        sandbox: true,
        environment: {
          AWS_REGION: local.region,
          AWS_ACCESS_KEY_ID: local.handlerEnv.AWS_ACCESS_KEY_ID as string,
          AWS_SECRET_ACCESS_KEY: local.handlerEnv.AWS_SECRET_ACCESS_KEY as string,
          ...resolveEnvironment(builder, local.handlerEnv),
          DYNAMODB_ENDPOINT: local.dynamoDbEndpoint,
          S3_ENDPOINT: local.s3Endpoint,
          AWS_ENDPOINT_URL_SQS: local.sqsEndpoint,
          POWERTOOLS_LOG_LEVEL: 'ERROR',
          // The merged PDF of 1,000 two-page items has 2,000 pages: over the default 1,000 a PDF may have.
          MAX_PDF_PAGES: String(2 * OUTPUT_ITEMS),
        },
      });
      sqs = new SQSClient({
        region: local.region,
        endpoint: local.sqsEndpoint,
        credentials: LOCAL_CREDENTIALS,
      });
      poller = startPoller({
        client: sqs,
        queueUrl: local.batchOutputQueueUrl,
        queueArn: queueArn(LOCAL_BATCH_OUTPUT_QUEUE),
        region: local.region,
        consumer: async (event) => {
          const { payload, functionError } = await builderProcess.invoke(event);
          if (functionError) throw new Error(`batch-outputs: ${functionError}: ${JSON.stringify(payload)}`);
          return payload as SQSBatchResponse;
        },
      });
    }, 300_000);

    afterEach((context) => {
      if (context.task.result?.state !== 'fail') return;
      console.error(`--- batch-outputs log:\n${builderProcess?.logs()}`);
    });

    afterAll(async () => {
      await poller?.stop();
      sqs?.destroy();
      await builderProcess?.close();
      await local?.close();
      if (dataDir) await rm(dataDir, { recursive: true, force: true });
    });

    it(`builds the merged PDF and the streamed ZIP of ${OUTPUT_ITEMS} items within its memory size`, async () => {
      expect(builderProcess.sandbox?.memoryLimitBytes).toBe(builder.memorySizeMiB * 1024 * 1024);
      const api = createApi(local.baseUrl);
      const token = await local.issueToken({ sub: 'sandbox-outputs', email: 'sandbox-outputs@example.com' });
      await putAccountOnPlan(local, 'sandbox-outputs', 'pro');
      const lines =
        '{% for i in range(120) %}<p>Line {{ i }} of invoice {{ n }}: an item described at some length</p>{% endfor %}';
      const res = await api('/v1/batches', {
        method: 'POST',
        token,
        body: {
          html: lines,
          items: Array.from({ length: OUTPUT_ITEMS }, (_, n) => ({
            variables: { n },
            file_name: `invoice-${n}.pdf`,
          })),
          output: { merged_pdf: true, zip: true },
        },
      });
      expect(res.status, res.text).toBe(202);
      const deadline = Date.now() + 600_000;
      let batch = res.json;
      while (batch.output_status !== 'ready' && batch.output_status !== 'failed') {
        if (Date.now() > deadline) throw new Error(`outputs not built: ${JSON.stringify(batch)}`);
        await new Promise((r) => setTimeout(r, 1000));
        batch = (await api(`/v1/batches/${res.json.id}`, { token })).json;
      }
      expect(batch, batch.output_error).toMatchObject({
        output_status: 'ready',
        counts: { completed: OUTPUT_ITEMS, failed: 0 },
      });
      const work = await mkdtemp(join(tmpdir(), 'batch-outputs-sandbox-'));
      try {
        const merged = join(work, 'merged.pdf');
        const zip = join(work, 'batch.zip');
        writeFileSync(merged, new Uint8Array(await (await fetch(batch.merged_pdf_url)).arrayBuffer()));
        writeFileSync(zip, new Uint8Array(await (await fetch(batch.zip_url)).arrayBuffer()));
        const info = execFileSync('pdfinfo', [merged], { encoding: 'utf8' });
        expect(Number(/^Pages:\s+(\d+)/m.exec(info)?.[1])).toBe(2 * OUTPUT_ITEMS);
        const names = execFileSync('zipinfo', ['-1', zip], { encoding: 'utf8' }).trim().split('\n');
        expect(names).toHaveLength(OUTPUT_ITEMS + 1);
        expect(names.at(-1)).toBe('manifest.json');
        expect(names[OUTPUT_ITEMS - 1]).toBe(`invoice-${OUTPUT_ITEMS - 1}.pdf`);
        const peak = builderProcess.sandbox?.peakMemoryBytes() ?? 0;
        console.info(
          `batch-outputs in the sandbox: ${OUTPUT_ITEMS} items, merged ${(statSync(merged).size / 2 ** 20).toFixed(1)} MiB, zip ${(statSync(zip).size / 2 ** 20).toFixed(1)} MiB, peak ${(peak / 2 ** 20).toFixed(0)} MiB of ${builder.memorySizeMiB}`,
        );
        expect(peak).toBeGreaterThan(0);
        expect(peak).toBeLessThan(builder.memorySizeMiB * 1024 * 1024);
      } finally {
        await rm(work, { recursive: true, force: true });
      }
    }, 900_000);
  },
);
