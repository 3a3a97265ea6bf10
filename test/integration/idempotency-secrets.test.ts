/**
 * Idempotency records keep no hash that could be tested offline against guessed passwords (issue
 * 34): a request body may hold a `protection`'s passwords, so the hash an Idempotency-Key's record
 * (and a batch item key's) keeps is an HMAC under a key of the deployment, not a SHA-256 of the
 * body. A replay of the same body still replays; another password is still another body.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { createBodyHashDigest } from '../../functions/adapters/secrets-manager/webhook-secret-box.js';
import { itemBodyHash } from '../../functions/domain/batches/batch-acceptance.js';
import { createPdfSchema, parseCreatePdf } from '../../functions/pdf/request.js';
import { parseTemplateData } from '../../functions/templating/data.js';
import { dynamoDbClient, useLocalStack } from '../helpers/local-stack.js';
import { newAccount, type TestAccount } from '../helpers/template-fixtures.js';

const local = useLocalStack();
let account: TestAccount;
/** The stack's keyed digest, made here from its secret (DATA_DIR/api-key-secret) the way it does. */
let keyed: (hash: string) => Promise<string>;
beforeAll(async () => {
  account = await newAccount(local, 'idem-secret');
  const secret = (await readFile(join(local.stack.dataDir, 'api-key-secret'), 'utf8')).trim();
  keyed = createBodyHashDigest(
    { kind: 'value', value: secret },
    {
      region: 'us-east-1',
      dynamoDbEndpoint: undefined,
      s3Endpoint: undefined,
      lambdaEndpoint: undefined,
      sqsEndpoint: undefined,
      credentials: undefined,
    },
  );
});

const OWNER = 'Correct-Horse-Battery-9';

/** Every string the account's partition holds, item by item. */
const accountItems = async (accountId: string): Promise<Record<string, unknown>[]> => {
  const out = await DynamoDBDocumentClient.from(dynamoDbClient(local.stack)).send(
    new QueryCommand({
      TableName: local.stack.tableName,
      KeyConditionExpression: 'PK = :pk',
      ExpressionAttributeValues: { ':pk': `ACCOUNT#${accountId}` },
    }),
  );
  return out.Items ?? [];
};

describe('an Idempotency-Key with protection passwords in the body', () => {
  it('keeps a keyed hash: not the SHA-256 of the body, and the same body still replays', async () => {
    const body = {
      html: '<p>Invoice {{ n }}</p>',
      variables: { n: 1 },
      protection: { owner_password: OWNER },
    };
    const headers = { 'Idempotency-Key': 'secret-body-1' };
    const first = await local.api('/v1/pdf', { method: 'POST', token: account.session, body, headers });
    expect(first.status, first.text).toBe(201);

    // The hash the service computes of this body before keying it (what used to be stored).
    const command = parseCreatePdf(
      body,
      createPdfSchema({ maxInlineHtmlBytes: 1 << 20, maxVariablesBytes: 1 << 20 }),
      {
        'idempotency-key': 'secret-body-1',
      },
    );
    const plain = command.idempotency?.bodyHash as string;
    expect(plain).toMatch(/^[0-9a-f]{64}$/);
    const records = (await accountItems(account.id)).filter((i) => i.type === 'idempotency');
    expect(records).toHaveLength(1);
    const stored = String(records[0]?.body_hash);
    expect(stored).toMatch(/^[0-9a-f]{64}$/);
    expect(stored).not.toBe(plain);
    // Keyed by the deployment's secret: what a reader of the table cannot recompute from a guess.
    expect(stored).toBe(await keyed(plain));
    expect(JSON.stringify(records)).not.toContain(OWNER);

    const again = await local.api('/v1/pdf', { method: 'POST', token: account.session, body, headers });
    expect(again.status, again.text).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.json.id).toBe(first.json.id);

    const otherPassword = await local.api('/v1/pdf', {
      method: 'POST',
      token: account.session,
      body: { ...body, protection: { owner_password: 'Another-Horse-Battery-8' } },
      headers,
    });
    expect(otherPassword.status, otherPassword.text).toBe(422);
    expect(otherPassword.json.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
  });

  it('keys a batch item key’s hash the same way', async () => {
    const fresh = await newAccount(local, 'idem-batch');
    const template = await local.api('/v1/templates', {
      method: 'POST',
      token: fresh.session,
      body: { name: 't', html: '<p>{{ n }}</p>' },
    });
    expect(template.status, template.text).toBe(201);
    const res = await local.api('/v1/batches', {
      method: 'POST',
      token: fresh.session,
      body: {
        template_id: template.json.id,
        protection: { owner_password: OWNER },
        items: [{ variables: { n: 1 }, idempotency_key: 'item-1' }],
      },
    });
    expect(res.status, res.text).toBe(202);
    const plain = itemBodyHash(
      { kind: 'saved', templateId: template.json.id, version: null },
      { protection: { owner_password: OWNER } },
      { variables: parseTemplateData('{"n":1}'), idempotencyKey: 'item-1' },
    );
    const records = (await accountItems(fresh.id)).filter((i) => typeof i.body_hash === 'string');
    expect(records).toHaveLength(1);
    expect(records[0]?.body_hash).not.toBe(plain);
    expect(records[0]?.body_hash).toBe(await keyed(plain));
    expect(JSON.stringify(records)).not.toContain(OWNER);
  });
});
