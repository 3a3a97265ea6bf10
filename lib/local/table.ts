/**
 * The local table: created from functions/table.ts (the shape the CDK stack deploys), or checked
 * against it when it exists.
 */
import { join } from 'node:path';
import {
  CreateTableCommand,
  type CreateTableCommandInput,
  DescribeTableCommand,
  type DynamoDBClient,
  ResourceInUseException,
  ResourceNotFoundException,
  type TableDescription,
} from '@aws-sdk/client-dynamodb';
import { tableSchema } from '../../functions/table.js';

const tableDefinition = (tableName: string): CreateTableCommandInput => {
  const keyNames = [
    tableSchema.partitionKey,
    tableSchema.sortKey,
    ...tableSchema.globalSecondaryIndexes.flatMap((i) => [i.partitionKey, i.sortKey]),
  ];
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: keyNames.map((AttributeName) => ({ AttributeName, AttributeType: 'S' })),
    KeySchema: [
      { AttributeName: tableSchema.partitionKey, KeyType: 'HASH' },
      { AttributeName: tableSchema.sortKey, KeyType: 'RANGE' },
    ],
    GlobalSecondaryIndexes: tableSchema.globalSecondaryIndexes.map((i) => ({
      IndexName: i.indexName,
      KeySchema: [
        { AttributeName: i.partitionKey, KeyType: 'HASH' },
        { AttributeName: i.sortKey, KeyType: 'RANGE' },
      ],
      Projection: { ProjectionType: 'ALL' },
    })),
  };
};

const describe = async (client: DynamoDBClient, tableName: string): Promise<TableDescription | undefined> => {
  try {
    return (await client.send(new DescribeTableCommand({ TableName: tableName }))).Table;
  } catch (e) {
    if (e instanceof ResourceNotFoundException) return undefined;
    throw e;
  }
};

/** Creates the table from functions/table.ts unless it is there; refuses a table of another shape. */
export const ensureTable = async (
  client: DynamoDBClient,
  tableName: string,
  dataDir: string,
): Promise<void> => {
  let table = await describe(client, tableName);
  if (!table) {
    try {
      await client.send(new CreateTableCommand(tableDefinition(tableName)));
    } catch (e) {
      if (!(e instanceof ResourceInUseException)) throw e;
    }
    table = await describe(client, tableName);
  }
  const wanted = tableSchema.globalSecondaryIndexes.map((i) => i.indexName).sort();
  const present = (table?.GlobalSecondaryIndexes ?? []).map((i) => i.IndexName).sort();
  const key = (table?.KeySchema ?? []).map((k) => k.AttributeName).join(',');
  if (key !== `${tableSchema.partitionKey},${tableSchema.sortKey}` || wanted.join() !== present.join()) {
    throw new Error(
      `the table in ${join(dataDir, 'dynamodb')} does not match functions/table.ts (indexes ${present.join(', ') || 'none'}); ` +
        'delete that directory to start with a fresh table',
    );
  }
  // dynalite runs with createTableMs 0, so this is at most a few polls.
  while ((await describe(client, tableName))?.TableStatus !== 'ACTIVE') {
    await new Promise((r) => setTimeout(r, 20));
  }
};
