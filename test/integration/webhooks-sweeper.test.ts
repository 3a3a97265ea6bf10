/**
 * Issue 20: what the sweeper ends tells its webhook endpoint, once, through the local stack's
 * webhook queue (the local SQS server) and sender, to a receiver on loopback; signatures verified
 * with the Standard Webhooks reference package.
 *
 * - An async job whose consumer claimed it and died (its lease ran out, no attempt left) is failed
 *   by the sweeper: its endpoint gets one job.failed, however many sweepers race, and a message
 *   delivered twice is still one POST.
 * - A job a pass failed before it died (so it told nobody) is told of by the next passes, once: the
 *   event's delivery id is the same whoever tells it.
 * - A batch whose last jobs the sweeper ends gets one batch.completed.
 * - A delivery recorded whose message was never sent (the process died between the two) is sent
 *   by the sweeper once it is overdue.
 *
 * The stack's consumer is off (asyncConsumer: false): a job waits in the queue until the test
 * claims it as a consumer that then dies would. The stack's own sweeper runs only at start-up
 * (SWEEP_INTERVAL_SECONDS is an hour): the test runs passes itself, several at once.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { createJobStore } from '../../functions/adapters/dynamodb/jobs.js';
import {
  createWebhookDeliveryStore,
  createWebhookStore,
} from '../../functions/adapters/dynamodb/webhooks.js';
import { systemClock } from '../../functions/core/runtime.js';
import { jobRecordRetentionSeconds } from '../../functions/domain/jobs/jobs.js';
import { createWebhookEmitter } from '../../functions/domain/webhooks/webhook-management.js';
import type { StoredWebhookEndpoint } from '../../functions/domain/webhooks/webhooks.js';
import { createHandler } from '../../functions/sweeper/index.js';
import { LOCAL_CREDENTIALS } from '../../lib/local/credentials.js';
import { dynamoDbClient, type Json, useLocalStack } from '../helpers/local-stack.js';
import { type ReceivedWebhook, useWebhookReceiver } from '../helpers/webhook-receiver.js';

const env: Record<string, string> = {
  SWEEP_INTERVAL_SECONDS: '3600',
  ASYNC_MAX_ATTEMPTS: '1',
  WEBHOOK_FIRST_RETRY_SECONDS: '1',
  WEBHOOK_RETRY_WINDOW_SECONDS: '10',
  WEBHOOK_TIMEOUT_MS: '1000',
  WEBHOOK_OVERDUE_SECONDS: '1',
};
const receiver = useWebhookReceiver(env);
const local = useLocalStack({ env, asyncConsumer: false });

const stores = () => {
  const db = DynamoDBDocumentClient.from(dynamoDbClient(local.stack));
  const { tableName } = local.stack;
  return {
    jobs: createJobStore(db, tableName, systemClock, {
      recordRetentionSeconds: jobRecordRetentionSeconds(30),
    }),
    endpoints: createWebhookStore(db, tableName, () => {}),
    deliveries: createWebhookDeliveryStore(db, tableName, systemClock),
  };
};

/** An async job as a consumer that claimed it and died leaves it: rendering, its lease about to run out. */
const claimAndDie = async (accountId: string, jobId: string): Promise<void> => {
  const { jobs } = stores();
  const job = await jobs.get(accountId, jobId, true);
  expect(job?.status).toBe('pending');
  const now = Date.now();
  expect(await jobs.claim(job as NonNullable<typeof job>, now + 50, now)).toBeDefined();
};

/** Passes of the sweeper at once, each as its own Lambda would run it. */
const racingSweeps = async (count: number) => {
  const sweeps = Array.from({ length: count }, () => createHandler(local.stack.handlerEnv));
  return Promise.all(sweeps.map((sweep) => sweep()));
};

const verified = (secret: string, request: ReceivedWebhook): Json =>
  new Webhook(secret).verify(request.body, {
    'webhook-id': String(request.headers['webhook-id']),
    'webhook-timestamp': String(request.headers['webhook-timestamp']),
    'webhook-signature': String(request.headers['webhook-signature']),
  }) as Json;

const createEndpoint = async (token: string, path: string, events?: string[]) => {
  const res = await local.api('/v1/webhooks', {
    method: 'POST',
    token,
    body: { url: receiver.url(path), ...(events ? { events } : {}) },
  });
  expect(res.status, res.text).toBe(201);
  return res.json as { id: string; secret: string };
};

/**
 * An async job for an account of its own whose endpoint (at receiver path `/ok/sweeper-<name>`)
 * it names, claimed by a consumer that died: the sweeper's to end once its lease is out.
 */
const abandonedAsyncJob = async (name: string) => {
  const sub = `acct-sweeper-${name}-${Date.now()}`;
  const token = await local.sessionToken(sub);
  const path = `/ok/sweeper-${name}`;
  const endpoint = await createEndpoint(token, path);
  const accepted = await local.api('/v1/pdf', {
    method: 'POST',
    token,
    body: { html: '<p>never rendered</p>', async: true, webhook_id: endpoint.id },
  });
  expect(accepted.status, accepted.text).toBe(202);
  const jobId: string = accepted.json.id;
  await claimAndDie(sub, jobId);
  await sleep(100);
  return { sub, token, path, endpoint, jobId };
};

describe('the sweeper and webhooks', () => {
  it('sends one signed job.failed for an async job it fails, however many sweepers race; a message delivered twice is one POST', async () => {
    const { sub, token, path, endpoint, jobId } = await abandonedAsyncJob('job');

    const reports = await racingSweeps(3);
    expect(reports.reduce((n, r) => n + r.interrupted, 0)).toBe(1);
    const [request] = await receiver.waitFor(path, 1);
    const payload = verified(endpoint.secret, request as ReceivedWebhook);
    expect(payload).toMatchObject({
      type: 'job.failed',
      data: {
        id: jobId,
        status: 'failed',
        webhook_id: endpoint.id,
        error: { code: 'PDF_RENDERING_INTERRUPTED' },
      },
    });
    // The job as the API shows it.
    const job = (await local.api(`/v1/pdf/${jobId}`, { token })).json;
    expect(payload.data).toEqual(job);

    // The same message once more (SQS delivers at least once): the attempt is made once.
    const deliveries = (await local.api(`/v1/webhooks/${endpoint.id}/deliveries`, { token })).json;
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]).toMatchObject({ event_type: 'job.failed', status: 'succeeded' });
    const sqs = new SQSClient({
      region: local.stack.region,
      endpoint: local.stack.sqsEndpoint,
      credentials: LOCAL_CREDENTIALS,
    });
    try {
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: local.stack.webhookQueueUrl,
          MessageBody: JSON.stringify({
            v: 1,
            account_id: sub,
            webhook_id: endpoint.id,
            delivery_id: deliveries[0].id,
            attempt: 1,
          }),
        }),
      );
    } finally {
      sqs.destroy();
    }
    // Another pass finds nothing to end or tell.
    expect((await racingSweeps(2)).reduce((n, r) => n + r.interrupted, 0)).toBe(0);
    await sleep(2000);
    expect(receiver.received.filter((r) => r.path === path)).toHaveLength(1);
    expect((await local.api(`/v1/webhooks/${endpoint.id}/deliveries`, { token })).json).toHaveLength(1);
  });

  it('tells of a job a pass failed and then died before telling: the next passes send its job.failed once', async () => {
    const { sub, token, path, endpoint, jobId } = await abandonedAsyncJob('died');
    // The fault: a pass fails the job, then dies before telling anyone (its write, and nothing after).
    expect(await stores().jobs.failExpired({ account_id: sub, id: jobId }, Date.now())).toBe(true);

    await racingSweeps(3);
    await racingSweeps(2);
    const [request] = await receiver.waitFor(path, 1);
    expect(verified(endpoint.secret, request as ReceivedWebhook)).toMatchObject({
      type: 'job.failed',
      data: { id: jobId, status: 'failed', error: { code: 'PDF_RENDERING_INTERRUPTED' } },
    });
    await sleep(2000);
    expect(receiver.received.filter((r) => r.path === path)).toHaveLength(1);
    expect((await local.api(`/v1/webhooks/${endpoint.id}/deliveries`, { token })).json).toHaveLength(1);
  });

  it('sends one batch.completed for a batch whose last jobs the sweeper ends', async () => {
    const sub = `acct-sweeper-batch-${Date.now()}`;
    const token = await local.sessionToken(sub);
    const path = '/ok/sweeper-batch';
    const endpoint = await createEndpoint(token, path, ['batch.completed']);
    const accepted = await local.api('/v1/batches', {
      method: 'POST',
      token,
      body: {
        html: '<p>item {{ n }}</p>',
        items: [{ variables: { n: 1 } }, { variables: { n: 2 } }, { variables: { n: 3 } }],
        webhook_id: endpoint.id,
      },
    });
    expect(accepted.status, accepted.text).toBe(202);
    const batchId = accepted.json.id;
    const jobs: Json[] = (await local.api(`/v1/batches/${batchId}/jobs`, { token })).json;
    expect(jobs).toHaveLength(3);
    for (const job of jobs) await claimAndDie(sub, job.id);
    await sleep(100);

    const reports = await racingSweeps(3);
    expect(reports.reduce((n, r) => n + r.interrupted, 0)).toBe(3);
    const [request] = await receiver.waitFor(path, 1);
    const payload = verified(endpoint.secret, request as ReceivedWebhook);
    expect(payload).toMatchObject({
      type: 'batch.completed',
      data: {
        id: batchId,
        status: 'completed',
        counts: { pending: 0, rendering: 0, completed: 0, failed: 3 },
      },
    });
    expect(payload.data).toEqual((await local.api(`/v1/batches/${batchId}`, { token })).json);
    await racingSweeps(2);
    await sleep(2000);
    expect(receiver.received.filter((r) => r.path === path)).toHaveLength(1);
  });

  it('sends a delivery whose message was never queued (a crash between the two) once it is overdue', async () => {
    const sub = `acct-sweeper-overdue-${Date.now()}`;
    const token = await local.sessionToken(sub);
    const path = '/ok/sweeper-overdue';
    const endpoint = await createEndpoint(token, path);
    const { endpoints, deliveries } = stores();
    const stored = (await endpoints.get(sub, endpoint.id)) as StoredWebhookEndpoint;
    // The fault: the delivery is recorded, then queueing its message fails (the process died).
    const emitter = createWebhookEmitter({
      deliveries,
      queue: {
        send: async () => {
          throw new Error('killed before queueing');
        },
      },
      clock: systemClock,
    });
    await expect(emitter.emit(stored, 'webhook.test', { message: 'recorded, never queued' })).rejects.toThrow(
      'killed before queueing',
    );
    const [pending] = (await local.api(`/v1/webhooks/${endpoint.id}/deliveries`, { token })).json;
    expect(pending).toMatchObject({ status: 'pending', attempts: [] });

    // Not yet overdue (WEBHOOK_OVERDUE_SECONDS: 1): left alone.
    expect((await racingSweeps(1))[0]?.redelivered).toBe(0);
    await sleep(1500);
    const reports = await racingSweeps(2);
    expect(reports.reduce((n, r) => n + (r.redelivered ?? 0), 0)).toBeGreaterThanOrEqual(1);
    const [request] = await receiver.waitFor(path, 1);
    expect(verified(endpoint.secret, request as ReceivedWebhook)).toMatchObject({
      type: 'webhook.test',
      data: { message: 'recorded, never queued' },
    });
    await sleep(1500);
    expect(receiver.received.filter((r) => r.path === path)).toHaveLength(1);
    const [delivered] = (await local.api(`/v1/webhooks/${endpoint.id}/deliveries`, { token })).json;
    expect(delivered).toMatchObject({ id: pending.id, status: 'succeeded', next_attempt_at: null });
    expect(delivered.attempts).toHaveLength(1);
  });
});
