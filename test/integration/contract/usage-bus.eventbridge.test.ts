/**
 * The usage event bus contract (test/contract/usage-bus.contract.ts) on the EventBridge adapter
 * (functions/adapters/eventbridge/usage-bus.ts), its PutEvents answered by a stand-in that keeps
 * what it was sent and refuses what EventBridge refuses (more than ten entries: ValidationException):
 * the real SDK client, its request as the service would send it.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { afterAll, beforeAll } from 'vitest';
import { createEventBridgeUsageBus } from '../../../functions/adapters/eventbridge/usage-bus.js';
import type { UsageEvent } from '../../../functions/domain/accounts/usage-events.js';
import { closeServer, listen } from '../../../lib/local/http-server.js';
import { usageBusContract } from '../../contract/usage-bus.contract.js';

interface PutEntry {
  readonly EventBusName: string;
  readonly Source: string;
  readonly DetailType: string;
  readonly Detail: string;
  readonly Time: number;
}

const BUS = 'usage-bus-test';
/** What each bus (by a request's EventBusName) was sent, in order. */
const taken = new Map<string, UsageEvent[]>();
let server: Server;
let endpoint: string;

const body = async (req: IncomingMessage): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const target = String(req.headers['x-amz-target'] ?? '');
    const { Entries = [] } = JSON.parse(await body(req)) as { Entries?: PutEntry[] };
    res.setHeader('content-type', 'application/x-amz-json-1.1');
    if (target !== 'AWSEvents.PutEvents' || Entries.length > 10) {
      res.statusCode = 400;
      res.end(JSON.stringify({ __type: 'ValidationException', message: 'at most 10 entries' }));
      return;
    }
    for (const e of Entries) {
      const list = taken.get(e.EventBusName) ?? [];
      list.push({
        source: e.Source as UsageEvent['source'],
        'detail-type': e.DetailType as UsageEvent['detail-type'],
        time: new Date(e.Time * 1000).toISOString(),
        detail: JSON.parse(e.Detail),
      });
      taken.set(e.EventBusName, list);
    }
    res.end(
      JSON.stringify({ FailedEntryCount: 0, Entries: Entries.map((_, i) => ({ EventId: `evt-${i}` })) }),
    );
  });
  const { port } = await listen(server, 0, '127.0.0.1');
  endpoint = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  await closeServer(server, 100);
});

let buses = 0;
usageBusContract({
  name: 'EventBridge (PutEvents, a stand-in endpoint)',
  create: async () => {
    const name = `${BUS}-${++buses}`;
    const bus = createEventBridgeUsageBus(
      name,
      {
        region: 'eu-west-1',
        dynamoDbEndpoint: undefined,
        s3Endpoint: undefined,
        lambdaEndpoint: undefined,
        sqsEndpoint: undefined,
        credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
      },
      endpoint,
    );
    return { bus, read: async () => taken.get(name) ?? [] };
  },
});
