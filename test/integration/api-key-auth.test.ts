/**
 * API keys on the PDF endpoints (key or session): a key made through POST /v1/api-keys and
 * stored only as its HMAC digest authenticates as its account, last_used_at records use, and
 * revocation through DELETE /v1/api-keys/{key_id} applies to the very next request.
 */
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { apiKeyDigest } from '../../functions/adapters/secrets-manager/api-key-digest.js';
import { dynamoDbClient, useLocalStack } from '../helpers/local-stack.js';

const local = useLocalStack();

const keyItem = (key: string) => ({
  PK: `APIKEY#${apiKeyDigest(local.stack.handlerEnv.API_KEY_SECRET as string, key)}`,
  SK: 'APIKEY',
});

/** An active key for `accountId`, made by its session through the API. */
const issueKey = async (accountId: string): Promise<{ id: string; key: string; session: string }> => {
  const session = await local.sessionToken(accountId);
  const res = await local.api('/v1/api-keys', { method: 'POST', token: session, body: { name: 'ci' } });
  expect(res.status, res.text).toBe(201);
  return { id: res.json.id, key: res.json.key, session };
};

describe('API keys on /v1/pdf', () => {
  it('render and read as the key’s account; the account’s session sees the same jobs', async () => {
    const { key, session } = await issueKey('acct-keys');
    const created = await local.api('/v1/pdf', {
      method: 'POST',
      token: key,
      body: { html: '<p>by key</p>' },
    });
    expect(created.status).toBe(201);
    expect((await local.api(`/v1/pdf/${created.json.id}`, { token: key })).json.status).toBe('completed');

    const listed = await local.api('/v1/pdf', { token: session });
    expect(listed.json.map((j: { id: string }) => j.id)).toEqual([created.json.id]);

    const stranger = await issueKey('acct-other');
    expect((await local.api(`/v1/pdf/${created.json.id}`, { token: stranger.key })).status).toBe(404);
  });

  it('stores no key, records last_used_at, and refuses a revoked key on the next request', async () => {
    const { id, key, session } = await issueKey('acct-revoke');
    const db = DynamoDBDocumentClient.from(dynamoDbClient(local.stack));
    expect((await local.api('/v1/pdf', { token: key })).status).toBe(200);

    const stored = (await db.send(new GetCommand({ TableName: local.stack.tableName, Key: keyItem(key) })))
      .Item;
    expect(JSON.stringify(stored)).not.toContain(key);
    expect(Date.now() - Date.parse(stored?.last_used_at)).toBeLessThan(60_000);
    const listed = (await local.api('/v1/api-keys', { token: session })).json;
    expect(listed[0]).toMatchObject({ id, last_used_at: stored?.last_used_at });

    expect((await local.api(`/v1/api-keys/${id}`, { method: 'DELETE', token: session })).status).toBe(200);
    const refused = await local.api('/v1/pdf', { token: key });
    expect(refused.status).toBe(401);
    expect(refused.json.error.code).toBe('INVALID_API_KEY');
    expect(refused.text).not.toContain(key);
  });
});
