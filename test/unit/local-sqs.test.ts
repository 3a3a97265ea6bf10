/**
 * The local SQS server (lib/local/sqs): each semantic the service relies on, through
 * @aws-sdk/client-sqs and the JSON protocol, as the adapter uses it. Times are seconds (SQS's
 * unit), so the tests that wait for a timeout wait a second or two.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import { startPoller } from '../../lib/local/sqs/poller.js';
import { openLocalQueues, queueArn } from '../../lib/local/sqs/queues.js';
import { type RunningLocalSqs, startLocalSqs } from '../../lib/local/sqs/server.js';
import { controlMs, describeBound, type PaceBound, paceBound, since } from '../helpers/timing.js';

const dirs: string[] = [];
const running: RunningLocalSqs[] = [];
afterEach(async () => {
  for (const s of running.splice(0)) await s.close();
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

const start = async (dir?: string) => {
  const dataDir = dir ?? (await mkdtemp(join(tmpdir(), 'local-sqs-')));
  if (!dir) dirs.push(dataDir);
  const sqs = await startLocalSqs(dataDir);
  running.push(sqs);
  const client = new SQSClient({
    region: 'us-east-1',
    endpoint: sqs.endpoint,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  return { sqs, client, dataDir };
};

const queue = async (client: SQSClient, name: string, attributes: Record<string, string> = {}) =>
  (await client.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }))).QueueUrl as string;

const receive = async (
  client: SQSClient,
  url: string,
  o: { wait?: number; max?: number; vis?: number } = {},
) =>
  (
    await client.send(
      new ReceiveMessageCommand({
        QueueUrl: url,
        WaitTimeSeconds: o.wait ?? 0,
        MaxNumberOfMessages: o.max ?? 10,
        ...(o.vis !== undefined ? { VisibilityTimeout: o.vis } : {}),
        MessageSystemAttributeNames: ['All'],
      }),
    )
  ).Messages ?? [];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('local SQS', () => {
  it('sends and receives with the SDK (MD5 checked by the SDK), and a deleted message is gone', async () => {
    const { client } = await start();
    const url = await queue(client, 'basic');
    const sent = await client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: '{"v":1,"é":"ü"}' }));
    expect(sent.MessageId).toBeTruthy();
    const [m] = await receive(client, url);
    expect(m?.Body).toBe('{"v":1,"é":"ü"}');
    expect(m?.Attributes?.ApproximateReceiveCount).toBe('1');
    await client.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: m?.ReceiptHandle }));
    expect(await receive(client, url)).toEqual([]);
  });

  it('redelivers a message whose visibility timeout ran out (at least once), not before', async () => {
    const { client } = await start();
    const url = await queue(client, 'visibility', { VisibilityTimeout: '1' });
    await client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'x' }));
    const [first] = await receive(client, url);
    expect(await receive(client, url)).toEqual([]); // invisible while in flight
    const [again] = await receive(client, url, { wait: 3 });
    expect(again?.MessageId).toBe(first?.MessageId);
    expect(again?.Attributes?.ApproximateReceiveCount).toBe('2');
    expect(again?.ReceiptHandle).not.toBe(first?.ReceiptHandle);
  });

  it('ChangeMessageVisibility moves the time a message comes back (0: at once)', async () => {
    const { client } = await start();
    const url = await queue(client, 'change', { VisibilityTimeout: '60' });
    await client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'x' }));
    const [m] = await receive(client, url);
    await client.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: url,
        ReceiptHandle: m?.ReceiptHandle,
        VisibilityTimeout: 0,
      }),
    );
    const [back] = await receive(client, url);
    expect(back?.MessageId).toBe(m?.MessageId);
    await client.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: url,
        ReceiptHandle: back?.ReceiptHandle,
        VisibilityTimeout: 1,
      }),
    );
    // The control: a receive that answers at once (nothing visible), the same round trip.
    const control = await controlMs(async () => expect(await receive(client, url)).toEqual([]));
    const started = performance.now();
    expect(await receive(client, url, { wait: 3 })).toHaveLength(1);
    const ms = since(started);
    // Back when its visibility ends (1 s), not when the long poll does.
    const bound: PaceBound = { expectedMs: 1000, slackMs: 1500, controlMs: control, factor: 50 };
    expect(ms, describeBound(ms, bound)).toBeLessThan(paceBound(bound));
    // A stale receipt handle cannot move a message it no longer holds.
    await expect(
      client.send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: url,
          ReceiptHandle: m?.ReceiptHandle,
          VisibilityTimeout: 0,
        }),
      ),
    ).rejects.toThrow();
  });

  it('DelaySeconds holds a new message back (per message and per queue)', async () => {
    const { client } = await start();
    const url = await queue(client, 'delay');
    await client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'late', DelaySeconds: 1 }));
    expect(await receive(client, url)).toEqual([]);
    const attributes = await client.send(
      new GetQueueAttributesCommand({
        QueueUrl: url,
        AttributeNames: ['ApproximateNumberOfMessagesDelayed'],
      }),
    );
    expect(attributes.Attributes?.ApproximateNumberOfMessagesDelayed).toBe('1');
    const [m] = await receive(client, url, { wait: 3 });
    expect(m?.Body).toBe('late');

    const delayed = await queue(client, 'delay-queue', { DelaySeconds: '1' });
    await client.send(new SendMessageCommand({ QueueUrl: delayed, MessageBody: 'q' }));
    expect(await receive(client, delayed)).toEqual([]);
    expect(await receive(client, delayed, { wait: 3 })).toHaveLength(1);
  });

  it('long polling answers as soon as a message arrives, and empty at the wait time', async () => {
    const { client } = await start();
    const url = await queue(client, 'long');
    // The control: a send and a receive that answers at once.
    const control = await controlMs(async () => {
      await client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'control' }));
      const [m] = await receive(client, url, { max: 1 });
      await client.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: m?.ReceiptHandle }));
    });
    const started = performance.now();
    const polling = receive(client, url, { wait: 10 });
    await sleep(300);
    await client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'now' }));
    expect((await polling).map((m) => m.Body)).toEqual(['now']);
    const ms = since(started);
    // Answered once the message is sent (300 ms), not at the end of the 10 s wait.
    const bound: PaceBound = { expectedMs: 300, slackMs: 2700, controlMs: control, factor: 50 };
    expect(ms, describeBound(ms, bound)).toBeLessThan(paceBound(bound));
    const emptyStarted = Date.now();
    expect(await receive(client, url, { wait: 1 })).toEqual([]);
    expect(Date.now() - emptyStarted).toBeGreaterThanOrEqual(900);
  });

  it('moves a message received more than maxReceiveCount times to the dead-letter queue', async () => {
    const { client } = await start();
    const dlq = await queue(client, 'render-dlq');
    const url = await queue(client, 'render', {
      VisibilityTimeout: '60',
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: queueArn('render-dlq'), maxReceiveCount: 2 }),
    });
    await client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'poison' }));
    for (let n = 1; n <= 2; n++) {
      const [m] = await receive(client, url);
      expect(m?.Attributes?.ApproximateReceiveCount).toBe(String(n));
      await client.send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: url,
          ReceiptHandle: m?.ReceiptHandle,
          VisibilityTimeout: 0,
        }),
      );
    }
    expect(await receive(client, url)).toEqual([]); // the third receive moved it instead
    const [dead] = await receive(client, dlq);
    expect(dead?.Body).toBe('poison');
  });

  it('delivers fairly across message groups: one group with many messages does not hold back another', async () => {
    const { client } = await start();
    const url = await queue(client, 'fair');
    for (let b = 0; b < 3; b++) {
      await client.send(
        new SendMessageBatchCommand({
          QueueUrl: url,
          Entries: Array.from({ length: 10 }, (_, i) => ({
            Id: String(i),
            MessageBody: `big-${b * 10 + i}`,
            MessageGroupId: 'acct-big',
          })),
        }),
      );
    }
    await client.send(
      new SendMessageCommand({ QueueUrl: url, MessageBody: 'small', MessageGroupId: 'acct-small' }),
    );
    // One at a time, as the render consumer takes them: the small group's message comes second at the latest.
    const order: string[] = [];
    for (let i = 0; i < 4; i++) {
      const [m] = await receive(client, url, { max: 1, vis: 60 });
      order.push(m?.Body ?? '');
    }
    expect(order.indexOf('small')).toBeGreaterThanOrEqual(0);
    expect(order.indexOf('small')).toBeLessThanOrEqual(1);
    expect(order.filter((b) => b.startsWith('big-'))[0]).toBe('big-0'); // in order within a group
  });

  it('keeps every acknowledged message across a restart, in flight ones invisible until their time', async () => {
    const first = await start();
    const url = await queue(first.client, 'durable', { VisibilityTimeout: '1' });
    for (let i = 0; i < 5; i++) {
      await first.client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: `m${i}` }));
    }
    // In flight for 6 s: a restart on a busy machine (CI's) took longer than the queue's 1 s.
    const [inFlight] = await receive(first.client, url, { max: 1, vis: 6 });
    const [deleted] = await receive(first.client, url, { max: 1, vis: 60 });
    await first.client.send(
      new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: deleted?.ReceiptHandle }),
    );
    // No clean shutdown: the journal is all there is (as after a SIGKILL, whose writes the kernel keeps).
    running.splice(running.indexOf(first.sqs), 1);
    first.sqs.server.closeAllConnections();
    first.sqs.server.close();

    const second = await start(first.dataDir);
    const url2 = (await second.client.send(new CreateQueueCommand({ QueueName: 'durable' })))
      .QueueUrl as string;
    // Held for the rest of the test, so that only the one in flight before the restart comes back.
    const now = await receive(second.client, url2, { vis: 60 });
    expect(now.map((m) => m.Body).sort()).toEqual(['m2', 'm3', 'm4']);
    const later = await receive(second.client, url2, { wait: 10 });
    expect(later.map((m) => m.Body)).toEqual([inFlight?.Body]);
    expect(later[0]?.Attributes?.ApproximateReceiveCount).toBe('2');
  });

  it('returnInFlight: messages received and not deleted (their consumers gone) are visible again at once, delayed ones are not', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'local-sqs-'));
    dirs.push(dir);
    const queues = await openLocalQueues(dir);
    queues.createQueue('died');
    queues.send('died', 'in-flight');
    queues.send('died', 'later', { delaySeconds: 900 });
    const [m] = await queues.receive('died', { maxMessages: 1, visibilityTimeout: 600 });
    expect(m?.Body).toBe('in-flight');
    await queues.close();
    const reopened = await openLocalQueues(dir);
    expect(reopened.counts('died')).toEqual({ visible: 0, inFlight: 1, delayed: 1 });
    expect(reopened.returnInFlight('died')).toBe(1);
    const again = await reopened.receive('died', { maxMessages: 10, visibilityTimeout: 60 });
    expect(again.map((r) => r.Body)).toEqual(['in-flight']);
    expect(again[0]?.Attributes?.ApproximateReceiveCount).toBe('2');
    await reopened.close();
  });

  it('compacts its journal once it has grown well past the live state, losing nothing', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'local-sqs-'));
    dirs.push(dir);
    const queues = await openLocalQueues(dir);
    queues.createQueue('churn');
    // Held back for the whole test: the churn below never receives it.
    queues.send('churn', 'kept-1', { delaySeconds: 900 });
    // Each message sent, received and deleted writes three lines: past 10,000, the journal is rewritten.
    for (let i = 0; i < 3500; i++) {
      queues.send('churn', `gone-${i}`, { groupId: 'g' });
      const [m] = await queues.receive('churn', { maxMessages: 1, visibilityTimeout: 60 });
      expect(m?.Body).toBe(`gone-${i}`);
      queues.delete('churn', m?.ReceiptHandle ?? '');
    }
    queues.send('churn', 'kept-2');
    await queues.close();
    const lines = (await readFile(join(dir, 'journal.jsonl'), 'utf8')).trim().split('\n');
    expect(lines.length).toBeLessThan(6000);
    const reopened = await openLocalQueues(dir);
    expect(reopened.counts('churn')).toEqual({ visible: 1, inFlight: 0, delayed: 1 });
    const got = await reopened.receive('churn', { maxMessages: 10, visibilityTimeout: 60 });
    expect(got.map((m) => m.Body)).toEqual(['kept-2']);
    await reopened.close();
  });

  it('the poller hands the consumer an SQSEvent and deletes all but the batchItemFailures', async () => {
    const { client, sqs } = await start();
    const url = await queue(client, 'consumer', { VisibilityTimeout: '1' });
    const seen: string[] = [];
    const poller = startPoller({
      client,
      queueUrl: url,
      queueArn: queueArn('consumer'),
      region: 'us-east-1',
      batchSize: 2,
      consumer: async (event: SQSEvent) => {
        for (const r of event.Records) {
          expect(r.eventSource).toBe('aws:sqs');
          seen.push(`${r.body}#${r.attributes.ApproximateReceiveCount}`);
        }
        return {
          batchItemFailures: event.Records.filter(
            (r) => r.body === 'retry' && r.attributes.ApproximateReceiveCount === '1',
          ).map((r) => ({ itemIdentifier: r.messageId })),
        };
      },
    });
    try {
      await client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'ok' }));
      await client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'retry' }));
      const deadline = Date.now() + 30_000; // a wait, not a bound: a loaded machine polls late
      while (!seen.includes('retry#2') && Date.now() < deadline) await sleep(100);
      await sleep(300);
      expect(seen.filter((s) => s.startsWith('ok'))).toEqual(['ok#1']);
      expect(seen).toContain('retry#1');
      expect(seen).toContain('retry#2');
      expect(sqs.queues.counts('consumer')).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
    } finally {
      await poller.stop();
    }
  });
});
