/**
 * Issue 33's done-when, the local half: a consumer added as an entry in the tables, its folder
 * and its use case (test/fixtures/consumers/) is run by the local stack's consumer starter
 * (lib/local/consumers.ts, the code lib/local/stack.ts starts every consumer with) from its entry
 * alone: its queue made on the local SQS server with the entry's attributes, its messages fed to
 * its handler by the event source mapping, a record that fails coming back and dead-lettered
 * after the entry's receives while the rest of its batch is done. Real parts: the local SQS
 * server, dynalite, the consumer stack. Its cloud half is test/unit/cdk-consumer-fixture.test.ts.
 */

import { mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand, SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import dynalite from 'dynalite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localDeadLetterQueueName, localQueueName } from '../../functions/queues.js';
import { settingsFromEnvironment } from '../../functions/settings.js';
import { bindingEnvironment, LOCAL_VARIABLES, REGION_VARIABLES } from '../../functions/wiring.js';
import { ensureLocalQueues, startLocalConsumers } from '../../lib/local/consumers.js';
import { LOCAL_CREDENTIALS } from '../../lib/local/credentials.js';
import { closeServer, listen } from '../../lib/local/http-server.js';
import { startLocalSqs } from '../../lib/local/sqs/server.js';
import { ensureTable } from '../../lib/local/table.js';
import { notesQueue, noteTaker } from '../fixtures/consumers/table.js';

const REGION = 'us-east-1';
const TABLE = 'consumer-fixture';
const tables = { queues: [notesQueue], consumers: [noteTaker] };

describe('a consumer added to the tables, on the local stack', () => {
  let dir: string;
  let dynamo: Server;
  let sqs: Awaited<ReturnType<typeof startLocalSqs>>;
  let sqsClient: SQSClient;
  let dynamoClient: DynamoDBClient;
  let db: DynamoDBDocumentClient;
  let stop: () => Promise<void>;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'consumer-fixture-'));
    dynamo = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 }) as Server;
    const dynamoDbEndpoint = `http://127.0.0.1:${(await listen(dynamo, 0, '127.0.0.1')).port}`;
    dynamoClient = new DynamoDBClient({
      region: REGION,
      endpoint: dynamoDbEndpoint,
      credentials: LOCAL_CREDENTIALS,
    });
    await ensureTable(dynamoClient, TABLE, '(memory)');
    db = DynamoDBDocumentClient.from(dynamoClient);
    sqs = await startLocalSqs(join(dir, 'sqs'));
    sqsClient = new SQSClient({ region: REGION, endpoint: sqs.endpoint, credentials: LOCAL_CREDENTIALS });
    const settings = settingsFromEnvironment({});
    ensureLocalQueues(sqs, tables.queues, tables.consumers, settings);
    // What the local stack gives a function: the emulators, and its own bindings' variables only.
    const common = {
      [REGION_VARIABLES.region]: REGION,
      [LOCAL_VARIABLES.accessKeyId]: LOCAL_CREDENTIALS.accessKeyId,
      [LOCAL_VARIABLES.secretAccessKey]: LOCAL_CREDENTIALS.secretAccessKey,
      [LOCAL_VARIABLES.dynamoDbEndpoint]: dynamoDbEndpoint,
      [LOCAL_VARIABLES.sqsEndpoint]: sqs.endpoint,
    };
    stop = await startLocalConsumers({
      consumers: tables.consumers,
      settings,
      sqs,
      client: sqsClient,
      region: REGION,
      environmentFor: (wiring) => ({
        ...common,
        ...(wiring.table ? bindingEnvironment('table', { tableName: TABLE }) : {}),
      }),
      parts: {},
    });
  });

  afterAll(async () => {
    await stop?.();
    sqsClient?.destroy();
    dynamoClient?.destroy();
    await sqs?.close();
    if (dynamo) await closeServer(dynamo, 1000);
    await rm(dir, { recursive: true, force: true });
  });

  const counts = async (queue: string) => {
    const { Attributes } = await sqsClient.send(
      new GetQueueAttributesCommand({ QueueUrl: sqs.queueUrl(queue), AttributeNames: ['All'] }),
    );
    return Attributes ?? {};
  };

  const until = async <T>(
    what: string,
    probe: () => Promise<T | undefined>,
    timeoutMs: number,
  ): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = await probe();
      if (found !== undefined) return found;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  it("makes its queue with its entry's visibility, redrive count and dead-letter queue", async () => {
    const attributes = await counts(localQueueName(notesQueue));
    expect(attributes.VisibilityTimeout).toBe('5');
    expect(attributes.MessageRetentionPeriod).toBe('86400');
    expect(JSON.parse(attributes.RedrivePolicy ?? '{}')).toMatchObject({ maxReceiveCount: 2 });
    expect((await counts(localDeadLetterQueueName(notesQueue))).MessageRetentionPeriod).toBe(
      String(7 * 86_400),
    );
  });

  it('records the notes sent to its queue; a batch’s failed record comes back and is dead-lettered after its receives, the rest done; a body that is no note is dropped', async () => {
    const id = `n-${Date.now()}`;
    // A partition key past DynamoDB's 2,048 bytes: its put fails for real, every time.
    const tooLong = 'x'.repeat(2100);
    await sqsClient.send(
      new SendMessageBatchCommand({
        QueueUrl: sqs.queueUrl(localQueueName(notesQueue)),
        Entries: [
          { Id: 'good', MessageBody: JSON.stringify({ id, text: 'hello' }) },
          { Id: 'failing', MessageBody: JSON.stringify({ id: tooLong, text: 'never kept' }) },
          { Id: 'no-note', MessageBody: 'not json' },
        ],
      }),
    );
    const item = await until(
      'the note',
      async () =>
        (await db.send(new GetCommand({ TableName: TABLE, Key: { PK: `NOTE#${id}`, SK: 'NOTE' } }))).Item,
      10_000,
    );
    expect(item).toMatchObject({ text: 'hello' });
    // Received twice (the entry's maxReceiveCount), 5 s apart (its local visibility): then the DLQ.
    await until(
      'the failing record in the dead-letter queue',
      async () =>
        (await counts(localDeadLetterQueueName(notesQueue))).ApproximateNumberOfMessages === '1'
          ? true
          : undefined,
      30_000,
    );
    const left = await counts(localQueueName(notesQueue));
    expect([left.ApproximateNumberOfMessages, left.ApproximateNumberOfMessagesNotVisible]).toEqual([
      '0',
      '0',
    ]);
  });
});
