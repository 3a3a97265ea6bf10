/**
 * The clients in clients/ (TypeScript and Python) against the local stack: each renders a saved
 * template with an API key, waits for an async job and for a batch, retries a 503 and a 429 after
 * their Retry-After (the faults injected in front of the real service), and verifies a real
 * webhook delivery, refusing it tampered with. PDFs are read with pdftotext.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import {
  createClient,
  PdfServiceError,
  verifyWebhook,
  WebhookVerificationError,
} from '../../clients/typescript/src/index.js';
import { putAccountOnPlan, useLocalStack } from '../helpers/local-stack.js';
import { pdfText } from '../helpers/pdf-readers.js';
import { type ReceivedWebhook, useWebhookReceiver } from '../helpers/webhook-receiver.js';

const run = promisify(execFile);
const PYTHON_CLIENT = fileURLToPath(new URL('../../clients/python', import.meta.url));

const env: Record<string, string> = {};
const receiver = useWebhookReceiver(env);
const local = useLocalStack({ env });

const account = `acct-clients-${randomUUID()}`;
let apiKey: string;
let templateId: string;
let webhookId: string;
let secret: string;

beforeAll(async () => {
  await putAccountOnPlan(local.stack, account, 'pro');
  const session = await local.sessionToken(account);
  const template = await local.api('/v1/templates', {
    method: 'POST',
    token: session,
    body: { name: 'Invoice', html: '<h1>Invoice {{ number }}</h1>' },
  });
  expect(template.status, template.text).toBe(201);
  templateId = template.json.id;
  const key = await local.api('/v1/api-keys', { method: 'POST', token: session, body: { name: 'clients' } });
  apiKey = key.json.key;
  const webhook = await local.api('/v1/webhooks', {
    method: 'POST',
    token: session,
    body: { url: receiver.url('/ok/clients'), events: ['job.completed'] },
  });
  expect(webhook.status, webhook.text).toBe(201);
  webhookId = webhook.json.id;
  secret = webhook.json.secret;
});

const textOf = async (pdf: Uint8Array) => (await pdfText(pdf)).stdout;

/** The delivery announcing `jobId`'s end. */
const deliveryOf = async (jobId: string): Promise<ReceivedWebhook> => {
  for (let n = 1; ; n++) {
    const received = await receiver.waitFor('/ok/clients', n, 60_000);
    const found = received.find((r) => JSON.parse(r.body).data?.id === jobId);
    if (found) return found;
  }
};

describe('the TypeScript client', () => {
  it('renders a saved template with an API key, and downloads the PDF', async () => {
    const client = createClient({ baseUrl: local.stack.baseUrl, apiKey });
    const job = await client.render({ template_id: templateId, variables: { number: 'TS-1' } });
    expect(job.status).toBe('completed');
    expect(await textOf(await client.download(job))).toContain('Invoice TS-1');
  });

  it('waits for an async job, and verifies the webhook announcing it', async () => {
    const client = createClient({ baseUrl: local.stack.baseUrl, apiKey });
    const pending = await client.renderAsync({
      template_id: templateId,
      variables: { number: 'TS-2' },
      webhook_id: webhookId,
    });
    expect(pending.status).toBe('pending');
    const job = await client.waitForJob(pending.id, { initialDelayMs: 200 });
    expect(job.status).toBe('completed');
    expect(await textOf(await client.download(job))).toContain('Invoice TS-2');

    const delivery = await deliveryOf(job.id);
    const event = verifyWebhook(secret, delivery.body, delivery.headers);
    expect(event.type).toBe('job.completed');
    expect(event.data.id).toBe(job.id);
    expect(() =>
      verifyWebhook(secret, delivery.body.replace('"completed"', '"failed"'), delivery.headers),
    ).toThrow(WebhookVerificationError);
    expect(() => verifyWebhook(secret, `${delivery.body} `, delivery.headers)).toThrow(
      WebhookVerificationError,
    );
    expect(() =>
      verifyWebhook(secret, delivery.body, delivery.headers, { now: new Date(Date.now() + 3_600_000) }),
    ).toThrow(/too old/);
  });

  it('waits for a batch, and reads its jobs in item order', async () => {
    const client = createClient({ baseUrl: local.stack.baseUrl, apiKey });
    const batch = await client.createBatch({
      template_id: templateId,
      items: [{ variables: { number: 'B-1' } }, { variables: { number: 'B-2' } }],
    });
    const done = await client.waitForBatch(batch.id, { initialDelayMs: 200 });
    expect(done.counts).toMatchObject({ completed: 2, failed: 0 });
    const jobs = await client.batchJobs(batch.id);
    expect(await textOf(await client.download(jobs[1] as (typeof jobs)[number]))).toContain('Invoice B-2');
  });

  it('retries a 503 and a 429 after their Retry-After, and stops at maxRetries', async () => {
    const faults = [
      { status: 503, retryAfter: '1', code: 'SERVICE_BUSY' },
      { status: 429, retryAfter: '2', code: 'USAGE_LIMIT_EXCEEDED' },
    ];
    const slept: number[] = [];
    let calls = 0;
    const faulty = (maxRetries: number) =>
      createClient({
        baseUrl: local.stack.baseUrl,
        apiKey,
        maxRetries,
        sleep: async (ms) => {
          slept.push(ms);
        },
        fetch: async (input, init) => {
          const fault = faults[calls++];
          if (fault) {
            return new Response(JSON.stringify({ error: { code: fault.code, message: 'injected' } }), {
              status: fault.status,
              headers: { 'retry-after': fault.retryAfter, 'content-type': 'application/json' },
            });
          }
          return fetch(input, init);
        },
      });
    const job = await faulty(3).render({ template_id: templateId, variables: { number: 'R-1' } });
    expect(job.status).toBe('completed');
    expect([calls, slept]).toEqual([3, [1000, 2000]]);

    calls = 0;
    const refused = await faulty(0)
      .render({ template_id: templateId, variables: { number: 'R-2' } })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(PdfServiceError);
    expect((refused as PdfServiceError).code).toBe('SERVICE_BUSY');
  });

  it("throws the service's error, with its code and request id", async () => {
    const client = createClient({ baseUrl: local.stack.baseUrl, apiKey });
    const error = (await client
      .render({ template_id: 'tpl_01J00000000000000000000000', variables: {} })
      .catch((e: unknown) => e)) as PdfServiceError;
    expect(error).toBeInstanceOf(PdfServiceError);
    expect([error.status, error.code]).toEqual([404, 'PDF_TEMPLATE_NOT_FOUND']);
    expect(error.requestId).toMatch(/\S/);
  });
});

/** The Python client's part, run by python3 from clients/python as a user's script would. */
const PYTHON_SCRIPT = `
import json, os, sys, urllib.error, email.message
sys.path.insert(0, os.environ["CLIENT_DIR"])
from pdf_render_service import PdfServiceClient, PdfServiceError, WebhookVerificationError, verify_webhook

out = {}
client = PdfServiceClient(os.environ["BASE_URL"], os.environ["API_KEY"])
job = client.render({"template_id": os.environ["TEMPLATE_ID"], "variables": {"number": "PY-1"}})
with open(os.path.join(os.environ["OUT"], "py-1.pdf"), "wb") as f:
    f.write(client.download(job))
out["render"] = job["status"]

pending = client.render_async({"template_id": os.environ["TEMPLATE_ID"], "variables": {"number": "PY-2"},
                               "webhook_id": os.environ["WEBHOOK_ID"]})
out["async_pending"] = pending["status"]
done = client.wait_for_job(pending["id"], initial_delay=0.2)
out["async"] = [done["id"], done["status"]]

batch = client.create_batch({"template_id": os.environ["TEMPLATE_ID"],
                             "items": [{"variables": {"number": "PB-1"}}, {"variables": {"number": "PB-2"}}]})
finished = client.wait_for_batch(batch["id"], initial_delay=0.2)
out["batch"] = [finished["counts"]["completed"], len(client.batch_jobs(batch["id"]))]

# A 503 injected before the real service: retried after its Retry-After.
slept, calls = [], []
real = client._urlopen
def faulty(request, timeout):
    calls.append(1)
    if len(calls) == 1:
        headers = email.message.Message()
        headers["Retry-After"] = "1"
        raise urllib.error.HTTPError(request.full_url, 503, "busy", headers, None)
    return real(request, timeout=timeout)
retrying = PdfServiceClient(os.environ["BASE_URL"], os.environ["API_KEY"], sleep=slept.append, urlopen=faulty)
out["retried"] = [retrying.usage()["plan"], len(calls), slept]

try:
    client.render({"template_id": "tpl_01J00000000000000000000000", "variables": {}})
except PdfServiceError as e:
    out["error"] = [e.status, e.code]

delivery = json.loads(os.environ["DELIVERY"])
if delivery:
    out["verified"] = verify_webhook(os.environ["SECRET"], delivery["body"], delivery["headers"])["data"]["id"]
    try:
        verify_webhook(os.environ["SECRET"], delivery["body"] + " ", delivery["headers"])
        out["tampered"] = "accepted"
    except WebhookVerificationError:
        out["tampered"] = "refused"
print(json.dumps(out))
`;

describe('the Python client (standard library only)', () => {
  it('renders a saved template with an API key, waits for a job and a batch, retries, verifies a webhook', async () => {
    const outDir = await mkdtemp(join(tmpdir(), 'python-client-'));
    onTestFinished(() => rm(outDir, { recursive: true, force: true }));
    const pythonEnv = {
      PATH: process.env.PATH ?? '',
      // Nothing written into the repository (its __pycache__).
      PYTHONDONTWRITEBYTECODE: '1',
      CLIENT_DIR: PYTHON_CLIENT,
      BASE_URL: local.stack.baseUrl,
      API_KEY: apiKey,
      TEMPLATE_ID: templateId,
      WEBHOOK_ID: webhookId,
      SECRET: secret,
      OUT: outDir,
      DELIVERY: 'null',
    };
    const first = JSON.parse(
      (await run('python3', ['-c', PYTHON_SCRIPT], { env: pythonEnv, timeout: 120_000 })).stdout,
    );
    expect(first).toMatchObject({
      render: 'completed',
      async_pending: 'pending',
      batch: [2, 2],
      retried: ['pro', 2, [1]],
      error: [404, 'PDF_TEMPLATE_NOT_FOUND'],
    });
    expect(first.async[1]).toBe('completed');
    expect(await textOf(await readFile(join(outDir, 'py-1.pdf')))).toContain('Invoice PY-1');

    // The delivery that announced the Python client's async job, verified by the Python client.
    const delivery = await deliveryOf(first.async[0]);
    const second = JSON.parse(
      (
        await run('python3', ['-c', PYTHON_SCRIPT], {
          env: { ...pythonEnv, DELIVERY: JSON.stringify({ body: delivery.body, headers: delivery.headers }) },
          timeout: 120_000,
        })
      ).stdout,
    );
    expect([second.verified, second.tampered]).toEqual([first.async[0], 'refused']);
  });
});
