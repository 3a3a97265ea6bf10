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

/**
 * The partition families of the single table: every item's partition key begins with one of these
 * (functions/adapters/dynamodb/keys.ts builds the keys from them). IAM can scope a function to
 * families (`dynamodb:LeadingKeys`), which is how the API functions that touch only an account's
 * own items and API keys are held to them (functions/route-declaration.ts).
 */
export const PARTITION_PREFIXES = {
  account: 'ACCOUNT#',
  template: 'TEMPLATE#',
  apiKey: 'APIKEY#',
  /** A client address's windows of refused requests (issue 40). */
  ip: 'IP#',
} as const;
export type PartitionPrefix = (typeof PARTITION_PREFIXES)[keyof typeof PARTITION_PREFIXES];

/** The table's actions a function may be allowed. */
export type TableAction =
  | 'dynamodb:GetItem'
  | 'dynamodb:BatchGetItem'
  | 'dynamodb:Query'
  | 'dynamodb:PutItem'
  | 'dynamodb:UpdateItem'
  | 'dynamodb:DeleteItem'
  | 'dynamodb:ConditionCheckItem';

/** The actions that change items. */
export const TABLE_WRITE_ACTIONS: readonly TableAction[] = [
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
];

/**
 * A function's access to the table: exactly these actions, and, with `partitions`, only on items
 * whose partition key begins with one of them (IAM's dynamodb:LeadingKeys; on the table itself,
 * not its indexes, whose partition keys are other families). `readWrite`: every item action on
 * the table and its indexes (CDK's grantReadWriteData).
 */
export type TableAccess =
  | 'readWrite'
  | { readonly actions: readonly TableAction[]; readonly partitions?: readonly PartitionPrefix[] };
