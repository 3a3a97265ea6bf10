/**
 * An account's data exported and deleted by the admin command, against the real local stack:
 * the export holds every item (keys as digests only) and the list of its PDFs; delete refuses
 * without --yes, then removes everything of the account and nothing of another's, and its key
 * stops working; running it again is harmless.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { createMemoryRenderer } from '../../functions/adapters/memory/renderer.js';
import { runAdmin } from '../../lib/admin.js';
import {
  createTempDataDir,
  dynamoDbClient,
  type Json,
  s3Client,
  startTestStack,
  useLocalStack,
} from '../helpers/local-stack.js';

const local = useLocalStack();
const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

const admin = async (argv: string[], dataDir = local.stack.dataDir) => {
  let stdout = '';
  let stderr = '';
  const code = await runAdmin(
    argv,
    { DATA_DIR: dataDir },
    {
      stdout: (t) => {
        stdout += t;
      },
      stderr: (t) => {
        stderr += t;
      },
    },
  );
  return { code, stdout, stderr };
};

/** An account with a key, a template, and a job rendered from it through the key, with an Idempotency-Key. */
const populate = async (sub: string) => {
  const token = await local.sessionToken(sub);
  const key = (await local.api('/v1/api-keys', { method: 'POST', token, body: { name: 'ci' } })).json.key;
  const template = await local.api('/v1/templates', {
    method: 'POST',
    token,
    body: { name: 'letter', html: '<p>Dear {{ name }}</p>' },
  });
  expect(template.status, template.text).toBe(201);
  const job = await local.api('/v1/pdf', {
    method: 'POST',
    token: key,
    body: { template_id: template.json.id, variables: { name: sub } },
    headers: { 'Idempotency-Key': `${sub}-1` },
  });
  expect(job.status, job.text).toBe(201);
  return { token, key: key as string, templateId: template.json.id as string, jobId: job.json.id as string };
};

describe('npm run admin -- export / delete', () => {
  it("exports an account's items and PDFs, then deletes all of it and nothing else", async () => {
    const suffix = Math.random().toString(36).slice(2, 10);
    const leaving = await populate(`leaving-${suffix}`);
    const staying = await populate(`staying-${suffix}`);
    const accountId = `leaving-${suffix}`;
    const dir = await mkdtemp(join(tmpdir(), 'account-export-'));
    dirs.push(dir);

    const out = join(dir, 'export.jsonl');
    const exported = await admin([
      'export',
      '--account',
      accountId,
      '--out',
      out,
      '--download',
      join(dir, 'pdf'),
    ]);
    expect(exported.code, exported.stderr).toBe(0);
    const text = await readFile(out, 'utf8');
    expect(text).not.toContain(leaving.key);
    const lines: Json[] = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const types = new Set(lines.filter((l) => l.kind === 'item').map((l) => l.item.type));
    for (const type of [
      'account',
      'api_key',
      'api_key_ref',
      'api_key_slots',
      'template',
      'template_version',
      'job',
      'usage',
      'rate_window',
      'idempotency',
    ]) {
      expect(types, type).toContain(type);
    }
    const objects = lines.filter((l) => l.kind === 'object');
    expect(objects.map((o) => o.key)).toEqual([`pdf/${accountId}/${leaving.jobId}.pdf`]);
    expect((await readFile(objects[0].file)).subarray(0, 5).toString()).toBe('%PDF-');
    // Another account's job and template are not in it.
    expect(text).not.toContain(staying.jobId);
    expect(text).not.toContain(staying.templateId);

    const refused = await admin(['delete', '--account', accountId]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('--yes');
    expect(JSON.parse(refused.stdout)).toMatchObject({
      account: accountId,
      deleted: false,
      bucket_objects: 1,
    });
    expect((await local.api(`/v1/pdf/${leaving.jobId}`, { token: leaving.key })).status).toBe(200);

    const deleted = await admin(['delete', '--account', accountId, '--yes']);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(JSON.parse(deleted.stdout)).toMatchObject({ deleted: true, table_items: lines.length - 1 });

    const again = (await local.api('/v1/pdf', { token: leaving.key })).status;
    expect(again).toBe(401);
    const db = DynamoDBDocumentClient.from(dynamoDbClient(local.stack));
    const partition = async (pk: string) =>
      (
        await db.send(
          new QueryCommand({
            TableName: local.stack.tableName,
            KeyConditionExpression: 'PK = :pk',
            ExpressionAttributeValues: { ':pk': pk },
          }),
        )
      ).Items ?? [];
    expect(await partition(`ACCOUNT#${accountId}`)).toEqual([]);
    expect(await partition(`TEMPLATE#${leaving.templateId}`)).toEqual([]);
    for (const line of lines.filter((l) => l.kind === 'item')) {
      const left = await db.send(
        new GetCommand({ TableName: local.stack.tableName, Key: { PK: line.item.PK, SK: line.item.SK } }),
      );
      expect(left.Item, `${line.item.PK} ${line.item.SK}`).toBeUndefined();
    }
    const listed = await s3Client(local.stack).send(
      new ListObjectsV2Command({ Bucket: local.stack.bucketName, Prefix: `pdf/${accountId}/` }),
    );
    expect(listed.Contents ?? []).toEqual([]);

    // The other account is untouched: its key, its job with a live link, its template.
    const job = await local.api(`/v1/pdf/${staying.jobId}`, { token: staying.key });
    expect(job.status).toBe(200);
    expect((await fetch(job.json.download_url)).status).toBe(200);
    expect((await local.api(`/v1/templates/${staying.templateId}`, { token: staying.token })).status).toBe(
      200,
    );

    const twice = await admin(['delete', '--account', accountId, '--yes']);
    expect(twice.code, twice.stderr).toBe(0);
    expect(twice.stderr).toContain('nothing to delete');
    expect((await admin(['export', '--account', accountId])).code).toBe(1);
  });

  it("deletes the orders of the account's async renders still in flight (they hold its variables)", async () => {
    const accountId = `async-leaving-${Math.random().toString(36).slice(2, 10)}`;
    const token = await local.sessionToken(accountId);
    expect((await local.api('/v1/me', { token })).status).toBe(200);
    // An order whose job has not ended yet, as the API writes it before the consumer takes it.
    const key = `orders/${accountId}/job_01JBQ5Y8S1W8M3ZT6YDV1KQ0XE.json`;
    const s3 = s3Client(local.stack);
    await s3.send(
      new PutObjectCommand({
        Bucket: local.stack.bucketName,
        Key: key,
        Body: '{"v":1,"secret":"variables"}',
      }),
    );
    const planned = await admin(['delete', '--account', accountId]);
    expect(JSON.parse(planned.stdout)).toMatchObject({ bucket_objects: 1 });
    const deleted = await admin(['delete', '--account', accountId, '--yes']);
    expect(deleted.code, deleted.stderr).toBe(0);
    const listed = await s3.send(
      new ListObjectsV2Command({ Bucket: local.stack.bucketName, Prefix: `orders/${accountId}/` }),
    );
    expect(listed.Contents ?? []).toEqual([]);
  });

  it("deletes the account's previews with it (issue 40: kept a day, but not a day past the account)", async () => {
    const accountId = `preview-leaving-${Math.random().toString(36).slice(2, 10)}`;
    const token = await local.sessionToken(accountId);
    const made = await local.api('/v1/previews', { method: 'POST', token, body: { html: '<p>mine</p>' } });
    expect(made.status, made.text).toBe(200);
    const planned = await admin(['delete', '--account', accountId]);
    expect(JSON.parse(planned.stdout)).toMatchObject({ bucket_objects: 1 });
    const deleted = await admin(['delete', '--account', accountId, '--yes']);
    expect(deleted.code, deleted.stderr).toBe(0);
    const listed = await s3Client(local.stack).send(
      new ListObjectsV2Command({ Bucket: local.stack.bucketName, Prefix: `previews/${accountId}/` }),
    );
    expect(listed.Contents ?? []).toEqual([]);
  });
});

describe('npm run admin -- export / delete on a stopped local stack', () => {
  it("opens the stack's DATA_DIR itself, table and bucket", async () => {
    const dataDir = await createTempDataDir();
    dirs.push(dataDir);
    const own = await startTestStack({ dataDir, renderer: createMemoryRenderer() });
    let jobId: string;
    try {
      const token = await own.sessionToken('stopped-1');
      const job = await own.api('/v1/pdf', { method: 'POST', token, body: { html: '<p>x</p>' } });
      expect(job.status, job.text).toBe(201);
      jobId = job.json.id;
    } finally {
      await own.stack.close();
    }
    const exported = await admin(['export', '--account', 'stopped-1'], dataDir);
    expect(exported.code, exported.stderr).toBe(0);
    const lines: Json[] = exported.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.filter((l) => l.kind === 'object').map((l) => l.key)).toEqual([
      `pdf/stopped-1/${jobId}.pdf`,
    ]);
    expect((await admin(['delete', '--account', 'stopped-1', '--yes'], dataDir)).code).toBe(0);
    const after = await admin(['delete', '--account', 'stopped-1'], dataDir);
    expect(after.code, after.stderr).toBe(0);
    expect(JSON.parse(after.stdout)).toMatchObject({ table_items: 0, bucket_objects: 0 });
  });
});
