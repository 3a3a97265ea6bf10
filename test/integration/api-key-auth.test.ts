/**
 * API keys on the PDF endpoints (key or session): a key stored only as its HMAC digest
 * authenticates as its account, revocation applies to the very next request, and last_used_at
 * records use. Keys are arranged in the table directly until the key endpoints exist.
 */
import { DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { apiKeyDigest } from '../../functions/core/api-keys.js';
import { apiKeyPrefix, generateApiKey } from '../../functions/domain/api-key-format.js';
import { dynamoDbClient, useLocalStack } from '../helpers/local-stack.js';

const local = useLocalStack();

const keyItem = (key: string) => ({
  PK: `APIKEY#${apiKeyDigest(local.stack.handlerEnv.API_KEY_SECRET as string, key)}`,
  SK: 'APIKEY',
});

/** An active key for `accountId`, as the key endpoints will store it: digest only. */
const issueKey = async (accountId: string): Promise<string> => {
  const key = generateApiKey();
  const db = DynamoDBDocumentClient.from(dynamoDbClient(local.stack));
  await db.send(
    new PutCommand({
      TableName: local.stack.tableName,
      Item: {
        ...keyItem(key),
        type: 'api_key',
        id: `key_${Date.now()}`,
        account_id: accountId,
        name: 'ci',
        prefix: apiKeyPrefix(key),
        created_at: new Date().toISOString(),
        last_used_at: null,
        revoked_at: null,
      },
    }),
  );
  return key;
};

describe('API keys on /v1/pdf', () => {
  it('render and read as the key’s account; the account’s session sees the same jobs', async () => {
    const key = await issueKey('acct-keys');
    const created = await local.api('/v1/pdf', {
      method: 'POST',
      token: key,
      body: { html: '<p>by key</p>' },
    });
    expect(created.status).toBe(201);
    expect((await local.api(`/v1/pdf/${created.json.id}`, { token: key })).json.status).toBe('completed');

    const session = await local.sessionToken('acct-keys');
    const listed = await local.api('/v1/pdf', { token: session });
    expect(listed.json.map((j: { id: string }) => j.id)).toEqual([created.json.id]);

    const stranger = await issueKey('acct-other');
    expect((await local.api(`/v1/pdf/${created.json.id}`, { token: stranger })).status).toBe(404);
  });

  it('stores no key, records last_used_at, and refuses a revoked key on the next request', async () => {
    const key = await issueKey('acct-revoke');
    const db = DynamoDBDocumentClient.from(dynamoDbClient(local.stack));
    expect((await local.api('/v1/pdf', { token: key })).status).toBe(200);

    const stored = (await db.send(new GetCommand({ TableName: local.stack.tableName, Key: keyItem(key) })))
      .Item;
    expect(JSON.stringify(stored)).not.toContain(key);
    expect(Date.now() - Date.parse(stored?.last_used_at)).toBeLessThan(60_000);

    await db.send(
      new UpdateCommand({
        TableName: local.stack.tableName,
        Key: keyItem(key),
        UpdateExpression: 'SET revoked_at = :now',
        ExpressionAttributeValues: { ':now': new Date().toISOString() },
      }),
    );
    const refused = await local.api('/v1/pdf', { token: key });
    expect(refused.status).toBe(401);
    expect(refused.json.error.code).toBe('INVALID_API_KEY');
    expect(refused.text).not.toContain(key);
  });
});
