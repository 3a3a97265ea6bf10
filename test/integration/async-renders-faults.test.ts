/**
 * Async renders when things go wrong, on a stack of the file's own whose renderer counts renders
 * and can be made to fail (the in-process Chromium one underneath): a retryable failure is
 * retried with its backoff and then completes (counted once); a render that fails on every
 * attempt fails for good after ASYNC_MAX_ATTEMPTS with its unit back; a message delivered twice
 * (sent again by hand, at once and after the job ended) renders and counts once.
 */

import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRendererConfig } from '../../functions/core/config.js';
import type { RenderRequest, RenderResult } from '../../functions/domain/common/ports.js';
import { createInProcessRenderer } from '../../functions/renderer/in-process.js';
import type { RendererInstance } from '../../functions/renderer/renderer.js';
import { localFontconfigFile } from '../../lib/layer-fonts.js';
import { LOCAL_CREDENTIALS } from '../../lib/local/credentials.js';
import { PROJECT_ROOT } from '../../lib/service-function.js';
import { waitForJob } from '../helpers/async-jobs.js';
import { useLocalStack } from '../helpers/local-stack.js';
import { billedJobIds } from '../helpers/usage-ledger.js';

/** Renders through Chromium, counting each render by its job; fails the next renders `failNext` says. */
let chromium: RendererInstance;
const rendered = new Map<string, number>();
let failNext: (request: RenderRequest) => RenderResult | undefined = () => undefined;
const renderer = {
  async render(request: RenderRequest): Promise<RenderResult> {
    rendered.set(request.jobId, (rendered.get(request.jobId) ?? 0) + 1);
    const fault = failNext(request);
    if (fault) return fault;
    return chromium.render(request);
  },
};

beforeAll(() => {
  chromium = createInProcessRenderer(
    readRendererConfig({ FONTCONFIG_FILE: localFontconfigFile(PROJECT_ROOT) }),
  );
});
afterAll(async () => {
  await chromium?.close();
});

const local = useLocalStack({
  renderer,
  env: {
    ASYNC_RETRY_BASE_SECONDS: '1',
    ASYNC_MAX_ATTEMPTS: '3',
    PLANS: JSON.stringify({ free: { monthlyRenders: 100, rendersPerMinute: 100, concurrentRenders: 10 } }),
  },
});

const CRASHED: RenderResult = {
  ok: false,
  code: 'PDF_RENDERING_FAILED',
  message: 'The renderer failed before producing a PDF.',
};

const submit = async (token: string, html: string) => {
  const res = await local.api('/v1/pdf', { method: 'POST', token, body: { html, async: true } });
  expect(res.status, res.text).toBe(202);
  return res.json.id as string;
};

describe('async renders, faults', () => {
  it('retries a retryable failure after its backoff, then completes: counted once', async () => {
    const account = `retry-${Date.now()}`;
    const token = await local.sessionToken(account);
    let failures = 0;
    const started = Date.now();
    failNext = () => (failures++ < 1 ? CRASHED : undefined);
    try {
      const id = await submit(token, '<p>second time lucky</p>');
      const job = await waitForJob(local.api, token, id);
      expect(job).toMatchObject({ status: 'completed', attempts: 2, error: null, page_count: 1 });
      expect(rendered.get(id)).toBe(2);
      // The first attempt's backoff: ASYNC_RETRY_BASE_SECONDS (1 s) before the second.
      expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
      expect((await local.api('/v1/usage', { token })).json.renders_used).toBe(1);
      // Billed once (issue 39): one usage ledger entry for the job, whatever its attempts.
      expect(await billedJobIds(local.stack, account)).toEqual([id]);
    } finally {
      failNext = () => undefined;
    }
  });

  it('fails for good after the last attempt, with the failure and its unit back', async () => {
    const account = `never-${Date.now()}`;
    const token = await local.sessionToken(account);
    failNext = (r) => (r.template.source.includes('never') ? CRASHED : undefined);
    try {
      const id = await submit(token, '<p>never</p>');
      const job = await waitForJob(local.api, token, id);
      expect(job).toMatchObject({ status: 'failed', attempts: 3, error: { code: 'PDF_RENDERING_FAILED' } });
      expect(rendered.get(id)).toBe(3);
      // The job fails, then its unit comes back (job-lifecycle.ts `fail`, in that order: a sweep
      // between the two finds the unit still refunding): a read right after the job's may see it
      // still held for the one write between (once in a run at a load of 14).
      await expect
        .poll(async () => (await local.api('/v1/usage', { token })).json.renders_used, { timeout: 5000 })
        .toBe(0);
      expect(await billedJobIds(local.stack, account)).toEqual([]);
    } finally {
      failNext = () => undefined;
    }
  });

  it('renders and counts a message delivered twice once: at the same time, and again after the job ended', async () => {
    // The account id is the session token's sub.
    const account = `dup-${Date.now()}`;
    const token = await local.sessionToken(account);
    const sqs = new SQSClient({
      region: local.stack.region,
      endpoint: local.stack.sqsEndpoint,
      credentials: LOCAL_CREDENTIALS,
    });
    try {
      // A slow page, so that the duplicates arrive while the first delivery renders.
      const id = await submit(
        token,
        "<p>twice</p><script>setTimeout(() => document.body.append(Object.assign(document.createElement('i'), { id: 'done' })), 1000)</script>",
      );
      const duplicate = async () =>
        sqs.send(
          new SendMessageCommand({
            QueueUrl: local.stack.renderQueueUrl,
            MessageBody: JSON.stringify({ v: 1, account_id: account, job_id: id }),
          }),
        );
      await Promise.all([duplicate(), duplicate()]);
      const ended = await waitForJob(local.api, token, id);
      expect(ended).toMatchObject({ status: 'completed', attempts: 1 });
      await duplicate();
      // Long enough for the consumer to take it (it long-polls): acknowledged without a render.
      await new Promise((r) => setTimeout(r, 1500));
      expect(rendered.get(id)).toBe(1);
      expect((await local.api(`/v1/pdf/${id}`, { token })).json).toMatchObject({
        status: 'completed',
        attempts: 1,
      });
      expect((await local.api('/v1/usage', { token })).json.renders_used).toBe(1);
      // Delivered three times, rendered and billed once: one ledger entry.
      expect(await billedJobIds(local.stack, account)).toEqual([id]);
    } finally {
      sqs.destroy();
    }
  });
});
