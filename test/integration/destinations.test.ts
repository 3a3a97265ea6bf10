/**
 * Destinations over HTTP (issue 36), on the run's shared stack: its STS stand-in (lib/local/sts.ts,
 * the trust policies of DATA_DIR/local-roles.json) and its S3 server's buckets. A role that does
 * not trust the service is refused with the external id to write into its trust policy; once it
 * does, the destination is created after a probe object was written and deleted; a missing bucket
 * is refused with its reason; another account's destination answers 404; bad input is a 422
 * naming the field. Nothing here renders: no Chromium.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CreateBucketCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { LOCAL_ROLES_FILE } from '../../lib/local/sts.js';
import { s3Client, useLocalStack } from '../helpers/local-stack.js';

const local = useLocalStack();
const ROLE = `arn:aws:iam::123456789012:role/pdf-delivery-${process.pid}`;
const BUCKET = `destinations-${process.pid}`;

/** Writes the role's trust policy as the local stack reads it (beside any other file's roles). */
const trust = async (roleArn: string, externalId: string) => {
  const file = join(local.stack.dataDir, LOCAL_ROLES_FILE);
  const roles = await readFile(file, 'utf8').then(JSON.parse, () => ({}));
  await writeFile(file, JSON.stringify({ ...roles, [roleArn]: { externalId } }));
};

const body = (over: Record<string, unknown> = {}) => ({
  name: 'invoices',
  bucket: BUCKET,
  region: 'us-east-1',
  role_arn: ROLE,
  key_template: 'invoices/{{ job.created_at[:7] }}/{{ job.id }}.pdf',
  prefix: 'pdf/',
  ...over,
});

describe('destinations over HTTP', () => {
  it('refuses an untrusted role with the external id, then creates it once trusted; the probe leaves nothing', async () => {
    const s3 = s3Client(local.stack);
    await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
    const token = await local.sessionToken();
    const create = (over?: Record<string, unknown>) =>
      local.api('/v1/destinations', { method: 'POST', token, body: body(over) });

    const refused = await create();
    expect(refused.status).toBe(422);
    expect(refused.json.error.code).toBe('DESTINATION_UNREACHABLE');
    expect(refused.json.error.details[0]).toMatchObject({ field: 'role_arn', rule: 'assume_role_denied' });
    const externalId = /the external id is (pdf-service-[0-9a-f]+)/.exec(refused.json.error.message)?.[1];
    expect(externalId).toBeDefined();
    await trust(ROLE, externalId as string);

    const missing = await create({ bucket: `${BUCKET}-missing` });
    expect(missing.status).toBe(422);
    expect(missing.json.error.details[0]).toMatchObject({ field: 'bucket', rule: 'bucket_not_found' });

    const created = await create();
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    expect(created.json).toMatchObject({ ...body(), external_id: externalId });
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET }));
    expect(listed.KeyCount ?? 0).toBe(0);

    // Another account: its own external id for the same role (refused), and 404 for the destination.
    const eve = await local.sessionToken();
    const evesTry = await local.api('/v1/destinations', { method: 'POST', token: eve, body: body() });
    expect(evesTry.json.error.details[0]).toMatchObject({ rule: 'assume_role_denied' });
    expect(evesTry.json.error.message).not.toContain(externalId);
    for (const method of ['GET', 'DELETE'] as const) {
      const other = await local.api(`/v1/destinations/${created.json.id}`, { method, token: eve });
      expect(other.status).toBe(404);
      expect(other.json.error.code).toBe('DESTINATION_NOT_FOUND');
    }
    expect((await local.api('/v1/destinations', { token: eve })).json).toEqual([]);

    expect((await local.api(`/v1/destinations/${created.json.id}`, { token })).json).toEqual(created.json);
    expect((await local.api('/v1/destinations', { token })).json).toEqual([created.json]);
    const deleted = await local.api(`/v1/destinations/${created.json.id}`, { method: 'DELETE', token });
    expect(deleted.status).toBe(200);
    expect((await local.api(`/v1/destinations/${created.json.id}`, { token })).status).toBe(404);
    s3.destroy();
  });

  it('refuses bad input with a 422 naming the field, before any probe, charging nothing', async () => {
    const token = await local.sessionToken();
    const cases: [Record<string, unknown>, string, string][] = [
      [{ bucket: '127.0.0.1' }, 'bucket', 'VALIDATION_ERROR'],
      [{ bucket: 'Localhost' }, 'bucket', 'VALIDATION_ERROR'],
      [{ region: 'localhost:9000' }, 'region', 'VALIDATION_ERROR'],
      [{ role_arn: 'arn:aws:iam::123:role/x' }, 'role_arn', 'VALIDATION_ERROR'],
      [{ key_template: '{{ job.id' }, 'key_template', 'INVALID_DESTINATION'],
      [{ key_template: '{{ secret }}.pdf' }, 'key_template', 'INVALID_DESTINATION'],
      [{ key_template: '../{{ job.id }}.pdf' }, 'key_template', 'INVALID_DESTINATION'],
    ];
    for (const [over, field, code] of cases) {
      const res = await local.api('/v1/destinations', { method: 'POST', token, body: body(over) });
      expect(res.status, JSON.stringify(over)).toBe(422);
      expect(res.json.error.code, JSON.stringify(over)).toBe(code);
      expect(res.json.error.details.map((d: { field: string }) => d.field)).toContain(field);
    }
    expect((await local.api('/v1/usage', { token })).json.renders_used).toBe(0);
    // An API key may not manage destinations.
    const key = await local.api('/v1/api-keys', { method: 'POST', token, body: { name: 'ci' } });
    const withKey = await local.api('/v1/destinations', { token: key.json.key });
    expect(withKey.status).toBe(403);
    expect(withKey.json.error.code).toBe('SESSION_REQUIRED');
  });

  it("a render, batch or merge naming an unknown or another account's destination answers 404, charging nothing", async () => {
    const s3 = s3Client(local.stack);
    const bucket = `${BUCKET}-named`;
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    s3.destroy();
    const token = await local.sessionToken();
    const over = { bucket, role_arn: `${ROLE}-named` };
    const refused = await local.api('/v1/destinations', { method: 'POST', token, body: body(over) });
    await trust(
      `${ROLE}-named`,
      /the external id is (pdf-service-[0-9a-f]+)/.exec(refused.json.error.message)?.[1] as string,
    );
    const created = await local.api('/v1/destinations', { method: 'POST', token, body: body(over) });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    const mine: string = created.json.id;

    const eve = await local.sessionToken();
    const html = '<p>hello</p>';
    const requests = (destination_id: unknown): [string, Record<string, unknown>][] => [
      ['/v1/pdf', { html, destination_id }],
      ['/v1/pdf', { html, destination_id, async: true }],
      ['/v1/batches', { html: '<p>{{ n }}</p>', items: [{ variables: { n: 1 } }], destination_id }],
      ['/v1/merges', { parts: [{ html }, { html }], destination_id }],
    ];
    const unknown = 'dst_01JZZZZZZZZZZZZZZZZZZZZZZZ';
    for (const [who, id] of [
      [eve, mine],
      [token, unknown],
      [token, 'not-a-destination'],
    ] as const) {
      for (const [path, request] of requests(id)) {
        const res = await local.api(path, { method: 'POST', token: who, body: request });
        expect(res.status, `${path} ${id}: ${JSON.stringify(res.json)}`).toBe(404);
        expect(res.json.error.code).toBe('DESTINATION_NOT_FOUND');
      }
    }
    for (const who of [eve, token]) {
      expect((await local.api('/v1/usage', { token: who })).json.renders_used).toBe(0);
      expect((await local.api('/v1/pdf', { token: who })).json).toEqual([]);
    }
    // The caller's own: accepted, and the job names it.
    const accepted = await local.api('/v1/pdf', {
      method: 'POST',
      token,
      body: { html, destination_id: mine, async: true },
    });
    expect(accepted.status, JSON.stringify(accepted.json)).toBe(202);
    expect(accepted.json.destination_id).toBe(mine);
    expect((await local.api(`/v1/pdf/${accepted.json.id}`, { token })).json.destination_id).toBe(mine);
  });
});
