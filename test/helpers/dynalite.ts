/**
 * A table on its own: dynalite in memory on a random port, with the table of functions/table.ts,
 * for store tests that need DynamoDB and nothing else (no Chromium, no S3, no HTTP).
 *
 *   const table = useTable();
 *   it('counts', async () => { const store = createUsageStore(table.db, table.name, clock); ... });
 */
import type { Server } from 'node:http';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import dynalite from 'dynalite';
import { afterAll, beforeAll } from 'vitest';
import { LOCAL_CREDENTIALS } from '../../lib/local/credentials.js';
import { closeServer, listen } from '../../lib/local/http-server.js';
import { ensureTable } from '../../lib/local/table.js';

export interface TestTable {
  readonly db: DynamoDBDocumentClient;
  readonly name: string;
}

export const useTable = (name = 'stores-test'): TestTable => {
  let server: Server | undefined;
  let client: DynamoDBClient | undefined;
  let db: DynamoDBDocumentClient | undefined;
  beforeAll(async () => {
    server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 }) as Server;
    const { port } = await listen(server, 0, '127.0.0.1');
    client = new DynamoDBClient({
      region: 'us-east-1',
      endpoint: `http://127.0.0.1:${port}`,
      credentials: LOCAL_CREDENTIALS,
    });
    await ensureTable(client, name, '(memory)');
    db = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
  });
  afterAll(async () => {
    client?.destroy();
    if (server) await closeServer(server, 1000);
  });
  return {
    get db() {
      if (!db) throw new Error('the table is not ready: use it inside tests or hooks');
      return db;
    },
    name,
  };
};

/** A clock the test sets. */
export const testClock = (start: string) => {
  let now = new Date(start);
  return {
    now: () => new Date(now),
    set: (at: string) => {
      now = new Date(at);
    },
    advance: (ms: number) => {
      now = new Date(now.getTime() + ms);
    },
  };
};
