/**
 * Accounts: created on the first authenticated session request (contract), on the free plan.
 * The record is read on every request, strongly consistent and never cached, so that a plan
 * change (the admin command) applies on the very next request, on every warm function.
 * An account with a known email is findable by it through GSI1 (never a scan).
 */
import {
  type DynamoDBDocumentClient,
  GetCommand,
  type GetCommandInput,
  PutCommand,
  type PutCommandInput,
  type QueryCommandInput,
  UpdateCommand,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import type { Account, AccountStore } from '../../domain/accounts/accounts.js';
import { isoNow } from '../../domain/common/clock.js';
import type { Clock } from '../../domain/common/ports.js';
import { DEFAULT_PLAN } from '../../settings.js';
import {
  accountEmailIndexKey,
  accountEmailPartition,
  accountKey,
  ENTITY,
  GSI1,
  ITEM_ABSENT,
  ITEM_EXISTS,
} from './keys.js';
import { queryAll } from './pagination.js';

const toAccount = (item: Record<string, unknown>): Account => ({
  id: String(item.id),
  email: typeof item.email === 'string' ? item.email : null,
  plan: String(item.plan),
  created_at: String(item.created_at),
});

const isConditionFailure = (e: unknown) => (e as Error).name === 'ConditionalCheckFailedException';

export const getAccountParams = (tableName: string, accountId: string): GetCommandInput => ({
  TableName: tableName,
  Key: accountKey(accountId),
  ConsistentRead: true,
});

/** A new account, findable by its email when it has one; only where no item is. */
export const createAccountParams = (tableName: string, account: Account): PutCommandInput => ({
  TableName: tableName,
  Item: {
    ...accountKey(account.id),
    type: ENTITY.account,
    ...account,
    ...(account.email ? accountEmailIndexKey(account.email, account.id) : {}),
  },
  ConditionExpression: ITEM_ABSENT,
});

/** The account's email and its GSI1 entry, moved together; answers the item as it became. */
export const setAccountEmailParams = (
  tableName: string,
  accountId: string,
  email: string,
): UpdateCommandInput => {
  const index = accountEmailIndexKey(email, accountId);
  return {
    TableName: tableName,
    Key: accountKey(accountId),
    UpdateExpression: 'SET email = :email, #gpk = :gpk, #gsk = :gsk',
    ConditionExpression: ITEM_EXISTS,
    ExpressionAttributeNames: { '#gpk': GSI1.partitionKey, '#gsk': GSI1.sortKey },
    ExpressionAttributeValues: {
      ':email': email,
      ':gpk': index[GSI1.partitionKey],
      ':gsk': index[GSI1.sortKey],
    },
    ReturnValues: 'ALL_NEW',
  };
};

/** Only an existing account item; answers the item as it was. */
export const setAccountPlanParams = (
  tableName: string,
  accountId: string,
  plan: string,
): UpdateCommandInput => ({
  TableName: tableName,
  Key: accountKey(accountId),
  UpdateExpression: 'SET #plan = :plan',
  ConditionExpression: `${ITEM_EXISTS} AND #type = :type`,
  ExpressionAttributeNames: { '#plan': 'plan', '#type': 'type' },
  ExpressionAttributeValues: { ':plan': plan, ':type': ENTITY.account },
  ReturnValues: 'ALL_OLD',
});

export const findAccountsByEmailParams = (tableName: string, email: string): QueryCommandInput => ({
  TableName: tableName,
  IndexName: GSI1.indexName,
  KeyConditionExpression: '#gpk = :gpk',
  ExpressionAttributeNames: { '#gpk': GSI1.partitionKey },
  ExpressionAttributeValues: { ':gpk': accountEmailPartition(email) },
});

export const createAccountStore = (
  db: DynamoDBDocumentClient,
  tableName: string,
  clock: Clock,
): AccountStore => {
  const readItem = async (accountId: string): Promise<Record<string, unknown> | undefined> => {
    const out = await db.send(new GetCommand(getAccountParams(tableName, accountId)));
    return out.Item?.type === ENTITY.account ? out.Item : undefined;
  };

  /**
   * The session token is the source of the email: keep the record (and its GSI1 entry) in step
   * with it. Writes only when something differs, so a steady account costs one read a request.
   */
  const syncEmail = async (item: Record<string, unknown>, email: string): Promise<Account> => {
    const index = accountEmailIndexKey(email, String(item.id));
    if (item.email === email && item[GSI1.partitionKey] === index[GSI1.partitionKey]) return toAccount(item);
    const out = await db.send(new UpdateCommand(setAccountEmailParams(tableName, String(item.id), email)));
    return toAccount(out.Attributes ?? item);
  };

  const create = async (accountId: string, email: string | undefined): Promise<Account> => {
    const account: Account = {
      id: accountId,
      email: email ?? null,
      plan: DEFAULT_PLAN,
      created_at: isoNow(clock.now()),
    };
    await db.send(new PutCommand(createAccountParams(tableName, account)));
    return account;
  };

  return {
    /** The caller's account, created on first use; `email` (a session's) is kept up to date. */
    async ensure(accountId: string, email: string | undefined): Promise<Account> {
      const existing = await readItem(accountId);
      if (existing) return email ? syncEmail(existing, email) : toAccount(existing);
      try {
        return await create(accountId, email);
      } catch (e) {
        // A concurrent first request created it: use that one.
        if (!isConditionFailure(e)) throw e;
        const created = await readItem(accountId);
        if (!created) throw e;
        return email ? syncEmail(created, email) : toAccount(created);
      }
    },

    /** The account, or undefined when it was never created. */
    async get(accountId: string): Promise<Account | undefined> {
      const item = await readItem(accountId);
      return item ? toAccount(item) : undefined;
    },

    /**
     * Puts the account on `plan` (the caller checks that the deployment has it). Undefined when
     * there is no such account: accounts come into being on their first session request.
     */
    async setPlan(accountId: string, plan: string): Promise<{ before: Account; after: Account } | undefined> {
      try {
        const out = await db.send(new UpdateCommand(setAccountPlanParams(tableName, accountId, plan)));
        const before = toAccount(out.Attributes ?? {});
        return { before, after: { ...before, plan } };
      } catch (e) {
        if (isConditionFailure(e)) return undefined;
        throw e;
      }
    },

    /** Accounts whose email is `email` (case-insensitive), oldest first. Reads GSI1, never scans. */
    async findByEmail(email: string): Promise<Account[]> {
      const items = await queryAll(db, findAccountsByEmailParams(tableName, email));
      return items
        .filter((item) => item.type === ENTITY.account)
        .map(toAccount)
        .sort((a, b) => a.created_at.localeCompare(b.created_at));
    },
  };
};
