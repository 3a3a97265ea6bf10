/**
 * The single table's shape: key attributes, indexes and the TTL attribute. Like the route table,
 * this is data that the CDK stack and the local stack both read, so the two tables cannot drift.
 * Item layouts (which entity uses which key) live in functions/adapters/dynamodb/keys.ts.
 */
export const tableSchema = {
  partitionKey: 'PK',
  sortKey: 'SK',
  /** Epoch seconds; DynamoDB deletes the item some time after it passes. */
  ttlAttribute: 'expires_at',
  globalSecondaryIndexes: [
    /** Secondary listings and lookups: templates by owner, accounts by email (see adapters/dynamodb/keys.ts). */
    { indexName: 'GSI1', partitionKey: 'GSI1PK', sortKey: 'GSI1SK' },
    /** Public listings (public templates, newest first). */
    { indexName: 'GSI2', partitionKey: 'GSI2PK', sortKey: 'GSI2SK' },
  ],
} as const;
