/**
 * The usage ledger (issue 39) of a running local stack, read as the operator's export reads it
 * (the DynamoDB adapter on the stack's dynalite), for tests that check it agrees with the jobs and
 * the month's totals.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createUsageLedger } from '../../functions/adapters/dynamodb/usage-ledger.js';
import type { UsageEntry } from '../../functions/domain/accounts/usage-ledger.js';
import { monthOf } from '../../functions/domain/common/clock.js';
import { LOCAL_CREDENTIALS } from '../../lib/local/stack.js';

export interface LedgerTarget {
  readonly dynamoDbEndpoint: string;
  readonly tableName: string;
  readonly region: string;
}

/** The account's ledger entries of `month` (default: this month), in job order. */
export const ledgerEntries = async (
  target: LedgerTarget,
  accountId: string,
  month: string = monthOf(new Date()),
): Promise<UsageEntry[]> => {
  const client = new DynamoDBClient({
    region: target.region,
    endpoint: target.dynamoDbEndpoint,
    credentials: LOCAL_CREDENTIALS,
  });
  try {
    return await createUsageLedger(DynamoDBDocumentClient.from(client), target.tableName, {
      retentionSeconds: 0,
    }).ofAccountMonth(accountId, month);
  } finally {
    client.destroy();
  }
};

/** The ids of the ledger's entries of the account's month, sorted: to compare with its completed jobs. */
export const billedJobIds = async (target: LedgerTarget, accountId: string, month?: string) =>
  (await ledgerEntries(target, accountId, month)).map((e) => e.job_id).sort();
