/**
 * Accounts: created on the first authenticated session request (contract), on the free plan.
 * The record is cached per warm container for a short while: plan changes apply within a minute.
 */
import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { DEFAULT_PLAN } from '../settings.js';
import { isoNow } from './clock.js';
import { accountKey, ENTITY, ITEM_ABSENT } from './keys.js';
import type { Clock } from './ports.js';

export interface Account {
  readonly id: string;
  readonly email: string | null;
  readonly plan: string;
  readonly created_at: string;
}

const CACHE_MS = 60_000;

export const createAccountStore = (db: DynamoDBDocumentClient, tableName: string, clock: Clock) => {
  const cache = new Map<string, { account: Account; until: number }>();

  const read = async (accountId: string): Promise<Account | undefined> => {
    const out = await db.send(new GetCommand({ TableName: tableName, Key: accountKey(accountId) }));
    if (!out.Item) return undefined;
    const { id, email, plan, created_at } = out.Item as Account;
    return { id, email: email ?? null, plan, created_at };
  };

  const remember = (account: Account): Account => {
    cache.set(account.id, { account, until: clock.now().getTime() + CACHE_MS });
    return account;
  };

  return {
    /** The caller's account, created on first use. */
    async ensure(accountId: string, email: string | undefined): Promise<Account> {
      const cached = cache.get(accountId);
      if (cached && cached.until > clock.now().getTime()) return cached.account;
      const existing = await read(accountId);
      if (existing) return remember(existing);
      const account: Account = {
        id: accountId,
        email: email ?? null,
        plan: DEFAULT_PLAN,
        created_at: isoNow(clock.now()),
      };
      try {
        await db.send(
          new PutCommand({
            TableName: tableName,
            Item: { ...accountKey(accountId), type: ENTITY.account, ...account },
            ConditionExpression: ITEM_ABSENT,
          }),
        );
        return remember(account);
      } catch (e) {
        // A concurrent first request created it: use that one.
        if ((e as Error).name !== 'ConditionalCheckFailedException') throw e;
        const created = await read(accountId);
        if (!created) throw e;
        return remember(created);
      }
    },
  };
};

export type AccountStore = ReturnType<typeof createAccountStore>;
