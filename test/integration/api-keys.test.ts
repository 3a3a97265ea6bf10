/**
 * /v1/api-keys over HTTP against the local stack: creating (the key shown once), listing (prefix
 * only, newest first, revoked ones too), revoking (on the very next request, idempotently), the
 * limit of 25 active keys under concurrent creations, names, and keys kept out of logs.
 */
import { randomUUID } from 'node:crypto';
import { DynamoDBDocumentClient, paginateScan, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isWellFormedApiKey } from '../../functions/domain/accounts/api-key-format.js';
import { errorSchema } from '../../functions/openapi.js';
import { type ApiResponse, dynamoDbClient, type Json, useLocalStack } from '../helpers/local-stack.js';
import type { CapturedOutput } from '../helpers/process-output.js';

const local = useLocalStack();

const expectError = (res: ApiResponse, status: number, code: string) => {
  expect(res.status, res.text).toBe(status);
  expect(res.json.error.code).toBe(code);
  expect(() => errorSchema.parse(res.json)).not.toThrow();
  expect(res.json.error.request_id).toBe(res.headers.get('x-request-id'));
};

const createKey = (token: string, name: unknown = 'ci') =>
  local.api('/v1/api-keys', { method: 'POST', token, body: { name } });

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** Everything the stack's handlers log while a test runs. */
let output: CapturedOutput;
beforeEach(() => {
  output = local.captureOutput();
});
afterEach(() => output.stop());

describe('POST /v1/api-keys', () => {
  it('answers 201 with the record and the key, shown this once; only a digest is stored', async () => {
    const token = await local.sessionToken();
    const res = await createKey(token, '  deploy bot  ');
    expect(res.status, res.text).toBe(201);
    expect(Object.keys(res.json)).toEqual([
      'id',
      'prefix',
      'name',
      'key',
      'created_at',
      'last_used_at',
      'revoked_at',
    ]);
    const { id, prefix, name, key, created_at, last_used_at, revoked_at } = res.json;
    expect(id).toMatch(/^key_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(isWellFormedApiKey(key)).toBe(true);
    expect(prefix).toBe(key.slice(0, 16));
    expect(name).toBe('deploy bot');
    expect(created_at).toMatch(ISO);
    expect(Date.now() - Date.parse(created_at)).toBeLessThan(60_000);
    expect({ last_used_at, revoked_at }).toEqual({ last_used_at: null, revoked_at: null });

    const listed = await local.api('/v1/api-keys', { token });
    expect(listed.status).toBe(200);
    expect(listed.json).toEqual([{ id, prefix, name, created_at, last_used_at: null, revoked_at: null }]);
    expect(listed.text).not.toContain(key);

    // Every item of the table, page by page (the shared stack's table holds every file's).
    const pages = paginateScan(
      { client: DynamoDBDocumentClient.from(dynamoDbClient(local.stack)) },
      { TableName: local.stack.tableName },
    );
    let scanned = 0;
    for await (const page of pages) {
      scanned += page.Items?.length ?? 0;
      expect(JSON.stringify(page.Items)).not.toContain(key.slice(16));
    }
    expect(scanned).toBeGreaterThan(0);
    expect(output.chunks.join('')).not.toContain(key.slice(16));
  });

  it('refuses names that are not 1-100 characters after trimming with 422 VALIDATION_ERROR', async () => {
    const token = await local.sessionToken();
    for (const name of ['', '   ', 'x'.repeat(101), 42, null]) {
      const res = await createKey(token, name);
      expectError(res, 422, 'VALIDATION_ERROR');
      expect(res.json.error.details).toEqual([{ field: 'name', issue: expect.stringContaining('1 to 100') }]);
    }
    expectError(
      await local.api('/v1/api-keys', { method: 'POST', token, body: {} }),
      422,
      'VALIDATION_ERROR',
    );
    const typo = await local.api('/v1/api-keys', { method: 'POST', token, body: { name: 'a', nmae: 'b' } });
    expectError(typo, 422, 'VALIDATION_ERROR');
    expect(typo.json.error.details).toEqual([
      { field: 'nmae', issue: 'is not a known field; did you mean name?' },
    ]);
    expectError(await local.api('/v1/api-keys', { method: 'POST', token, body: '{' }), 400, 'INVALID_JSON');
    expect((await createKey(token, `  ${'é'.repeat(100)}  `)).status).toBe(201);
    expect((await createKey(token, '🔑'.repeat(100))).status).toBe(201);
    expect((await local.api('/v1/api-keys', { token })).json).toHaveLength(2);
  });

  it('allows 25 active keys: of 40 concurrent creations next to 20 active keys, exactly 5 succeed', async () => {
    const token = await local.sessionToken();
    for (let i = 0; i < 20; i++) expect((await createKey(token, `k${i}`)).status).toBe(201);
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => createKey(token, `race ${i}`)));
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(5);
    expect(statuses.filter((s) => s === 409)).toHaveLength(35);
    for (const refused of answers.filter((r) => r.status === 409)) {
      expectError(refused, 409, 'API_KEY_LIMIT_REACHED');
    }
    const keys = (await local.api('/v1/api-keys', { token })).json;
    expect(keys).toHaveLength(25);

    // Revoking frees a slot, for one more key.
    expect((await local.api(`/v1/api-keys/${keys[0].id}`, { method: 'DELETE', token })).status).toBe(200);
    expect((await createKey(token, 'after revoke')).status).toBe(201);
    expectError(await createKey(token, 'one too many'), 409, 'API_KEY_LIMIT_REACHED');
  });
});

describe('GET /v1/api-keys', () => {
  it('lists newest first, revoked keys with revoked_at, and only the caller’s keys', async () => {
    const token = await local.sessionToken();
    const ids: string[] = [];
    for (const name of ['one', 'two', 'three']) ids.push((await createKey(token, name)).json.id);
    await local.api(`/v1/api-keys/${ids[1]}`, { method: 'DELETE', token });
    const listed: Json[] = (await local.api('/v1/api-keys', { token })).json;
    expect(listed.map((k) => k.name)).toEqual(['three', 'two', 'one']);
    expect(listed.map((k) => k.revoked_at === null)).toEqual([true, false, true]);
    for (const k of listed) expect(k).not.toHaveProperty('key');
    expect((await local.api('/v1/api-keys', { token: await local.sessionToken() })).json).toEqual([]);
  });
});

describe('DELETE /v1/api-keys/{key_id}', () => {
  it('revokes for the very next request, and revoking again returns the same record', async () => {
    const token = await local.sessionToken();
    const { id, key } = (await createKey(token)).json;
    expect((await local.api('/v1/usage', { token: key })).status).toBe(200);

    const revoked = await local.api(`/v1/api-keys/${id}`, { method: 'DELETE', token });
    expect(revoked.status).toBe(200);
    expect(revoked.json).toMatchObject({ id, revoked_at: expect.stringMatching(ISO) });
    expect(revoked.json.last_used_at).toMatch(ISO);
    expect(revoked.json).not.toHaveProperty('key');

    for (const path of ['/v1/usage', '/v1/pdf']) {
      const refused = await local.api(path, { token: key });
      expectError(refused, 401, 'INVALID_API_KEY');
      expect(refused.text).not.toContain(key);
    }
    const again = await local.api(`/v1/api-keys/${id}`, { method: 'DELETE', token });
    expect(again.status).toBe(200);
    expect(again.json).toEqual(revoked.json);
  });

  it('answers 404 API_KEY_NOT_FOUND for a missing key, a malformed id and another account’s key', async () => {
    const owner = await local.sessionToken();
    const { id, key } = (await createKey(owner)).json;
    const stranger = await local.sessionToken();
    for (const path of [
      `/v1/api-keys/${id}`,
      '/v1/api-keys/key_01ARZ3NDEKTSV4RRFFQ69G5FAV',
      '/v1/api-keys/nope',
    ]) {
      expectError(await local.api(path, { method: 'DELETE', token: stranger }), 404, 'API_KEY_NOT_FOUND');
    }
    // The stranger's attempt changed nothing.
    expect((await local.api('/v1/usage', { token: key })).status).toBe(200);
    expect((await local.api('/v1/api-keys', { token: owner })).json[0].revoked_at).toBeNull();
  });

  it('answers 405 with Allow for other methods on a key', async () => {
    const token = await local.sessionToken();
    const res = await local.api('/v1/api-keys/key_01ARZ3NDEKTSV4RRFFQ69G5FAV', { token });
    expectError(res, 405, 'METHOD_NOT_ALLOWED');
    expect(res.headers.get('allow')).toBe('DELETE');
  });
});

describe('the data behind the keys', () => {
  it('keeps an account’s keys under its own partition, as refs to digests', async () => {
    const sub = `acct-refs-${randomUUID()}`;
    const token = await local.sessionToken(sub);
    const { id } = (await createKey(token)).json;
    const out = await DynamoDBDocumentClient.from(dynamoDbClient(local.stack)).send(
      new QueryCommand({
        TableName: local.stack.tableName,
        KeyConditionExpression: 'PK = :pk',
        ExpressionAttributeValues: { ':pk': `ACCOUNT#${sub}` },
      }),
    );
    const types = (out.Items ?? []).map((i) => `${i.type}:${i.SK}`).sort();
    expect(types).toEqual(['account:ACCOUNT', `api_key_ref:APIKEY#${id}`, 'api_key_slots:APIKEY_SLOTS']);
  });
});
