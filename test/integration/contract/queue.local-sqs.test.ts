/**
 * The queue contract (test/contract/queue.contract.ts) on the SQS adapter
 * (functions/adapters/sqs/queue.ts) against the local SQS server, its consumer behind the local
 * event source mapping (lib/local/sqs/poller.ts), as the local stack runs them.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteMessageCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll } from 'vitest';
import { createSqsQueue } from '../../../functions/adapters/sqs/queue.js';
import { LOCAL_CREDENTIALS } from '../../../lib/local/credentials.js';
import { type Poller, startPoller } from '../../../lib/local/sqs/poller.js';
import { LOCAL_SQS_REGION, queueArn } from '../../../lib/local/sqs/queues.js';
import { type RunningLocalSqs, startLocalSqs } from '../../../lib/local/sqs/server.js';
import { queueContract } from '../../contract/queue.contract.js';

let dir = '';
let sqs: RunningLocalSqs;
let client: SQSClient;
let made = 0;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'queue-contract-'));
  sqs = await startLocalSqs(dir);
  client = new SQSClient({
    region: LOCAL_SQS_REGION,
    endpoint: sqs.endpoint,
    credentials: LOCAL_CREDENTIALS,
  });
});

afterAll(async () => {
  client?.destroy();
  await sqs?.close();
  await rm(dir, { recursive: true, force: true });
});

queueContract({
  name: 'the local SQS server',
  secondMs: 1000,
  async create(settings) {
    const name = `contract-${++made}`;
    const dlq = `${name}-dlq`;
    sqs.queues.ensureQueue(dlq, {});
    sqs.queues.ensureQueue(name, {
      VisibilityTimeout: String(settings.visibilityTimeoutSeconds),
      ...(settings.maxReceiveCount !== undefined
        ? {
            RedrivePolicy: JSON.stringify({
              deadLetterTargetArn: queueArn(dlq),
              maxReceiveCount: settings.maxReceiveCount,
            }),
          }
        : {}),
    });
    const queueUrl = sqs.queueUrl(name);
    const pollers: Poller[] = [];
    return {
      queue: createSqsQueue(client, queueUrl),
      consume(consumer, batchSize) {
        pollers.push(
          startPoller({
            client,
            queueUrl,
            queueArn: queueArn(name),
            region: LOCAL_SQS_REGION,
            consumer,
            batchSize: batchSize ?? 1,
            onError: () => {},
          }),
        );
      },
      async deadLetters() {
        const out = await client.send(
          new ReceiveMessageCommand({
            QueueUrl: sqs.queueUrl(dlq),
            MaxNumberOfMessages: 10,
            WaitTimeSeconds: 0,
          }),
        );
        const bodies: unknown[] = [];
        for (const m of out.Messages ?? []) {
          bodies.push(JSON.parse(m.Body ?? ''));
          await client.send(
            new DeleteMessageCommand({ QueueUrl: sqs.queueUrl(dlq), ReceiptHandle: m.ReceiptHandle }),
          );
        }
        return bodies;
      },
      async close() {
        await Promise.all(pollers.map((p) => p.stop(2000)));
      },
    };
  },
});
