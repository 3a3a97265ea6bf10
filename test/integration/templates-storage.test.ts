/**
 * Saved templates over HTTP where storage shows: a template of exactly 1 MiB of UTF-8 (multi-byte,
 * pseudo-random, so compression alone cannot fit it in a 400 KB item) saved, read, edited, listed
 * and rendered; lists of such templates cut to fit the Lambda response; versions (old ones render
 * as they were, concurrent edits both land); deleting a template leaves its jobs and their files;
 * making a template private stops other accounts on the very next request.
 */
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import {
  ANSWER_BUDGET_BYTES,
  arrayPayloadBytes,
  payloadBytes,
} from '../../functions/domain/templates/template-content.js';
import { dynamoDbClient, type Json, useLocalStack } from '../helpers/local-stack.js';
import { readPdf } from '../helpers/pdf.js';
import { MiB, newAccount, noise, saveTemplate, templateOfSize } from '../helpers/template-fixtures.js';

// Its own: it pages through GET /v1/templates/public, which lists every account's templates.
const local = useLocalStack({ ownStack: true });

const render = (token: string, body: Json) => local.api('/v1/pdf', { method: 'POST', token, body });

const pdfText = async (job: Json): Promise<string> => {
  const res = await fetch(job.download_url);
  expect(res.status).toBe(200);
  return (await readPdf(new Uint8Array(await res.arrayBuffer()))).text;
};

const tableItems = async (templateId: string) => {
  const db = DynamoDBDocumentClient.from(dynamoDbClient(local.stack));
  const items: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const out = await db.send(
      new QueryCommand({
        TableName: local.stack.tableName,
        KeyConditionExpression: 'PK = :pk',
        ExpressionAttributeValues: { ':pk': `TEMPLATE#${templateId}` },
        ExclusiveStartKey: startKey,
      }),
    );
    items.push(...(out.Items ?? []));
    startKey = out.LastEvaluatedKey;
  } while (startKey);
  return items;
};

const patch = (token: string, id: string, body: Json) =>
  local.api(`/v1/templates/${id}`, { method: 'PATCH', token, body });

describe('a template of exactly 1 MiB of UTF-8', () => {
  it('is saved, read, edited, listed and rendered, whole', { timeout: 120_000 }, async () => {
    const owner = await newAccount(local);
    const first = templateOfSize(MiB, 11, 'First');
    expect(first).toMatch(/[é€漢🙂]/u);

    const created = await saveTemplate(local, owner.session, { name: 'one MiB', html: first });
    expect(created).toMatchObject({ version: 1, variables: ['title'] });
    expect(created.html).toBe(first);
    // Chunked: no item near DynamoDB's 400 KB limit, and more than one holds the html.
    const items = await tableItems(created.id);
    const withData = items.filter((i) => i.data instanceof Uint8Array);
    expect(withData.length).toBeGreaterThanOrEqual(3);
    for (const { data, ...rest } of items) {
      const bytes = (data instanceof Uint8Array ? data.byteLength : 0) + JSON.stringify(rest).length;
      expect(bytes).toBeLessThan(300_000);
    }
    const stored = withData.reduce((sum, i) => sum + (i.data as Uint8Array).byteLength, 0);
    // gzip helps, but not nearly enough to fit one item.
    expect(stored).toBeGreaterThan(400_000);

    const read = await local.api(`/v1/templates/${created.id}`, { token: owner.key });
    expect(read.status).toBe(200);
    expect(read.json.html).toBe(first);
    expect(Buffer.byteLength(read.json.html, 'utf8')).toBe(MiB);

    const second = templateOfSize(MiB, 12, 'Second');
    const edited = await patch(owner.session, created.id, { html: second });
    expect(edited.status, edited.text.slice(0, 300)).toBe(200);
    expect(edited.json).toMatchObject({ version: 2 });
    expect(edited.json.html).toBe(second);
    expect((await local.api(`/v1/templates/${created.id}`, { token: owner.session })).json.html).toBe(second);

    const listed = await local.api('/v1/templates', { token: owner.session });
    expect(listed.json.map((t: Json) => t.id)).toEqual([created.id]);
    expect(listed.json[0].html).toBe(second);

    const latest = await render(owner.key, { template_id: created.id, variables: { title: 'Now' } });
    expect(latest.status, latest.text).toBe(201);
    expect(latest.json).toMatchObject({ template_id: created.id, template_version: 2 });
    const latestText = await pdfText(latest.json);
    expect(latestText).toContain('Second Now');
    expect(latestText).toContain('End of Second for Now');

    const old = await render(owner.key, {
      template_id: created.id,
      template_version: 1,
      variables: { title: 'Then' },
    });
    expect(old.status, old.text).toBe(201);
    expect(old.json.template_version).toBe(1);
    expect(await pdfText(old.json)).toContain('End of First for Then');
  });

  it('one byte more is refused with HTML_CONTENT_TOO_LARGE, on create and on edit', async () => {
    const owner = await newAccount(local);
    const tooBig = templateOfSize(MiB + 1, 13);
    const res = await local.api('/v1/templates', {
      method: 'POST',
      token: owner.session,
      body: { name: 'too big', html: tooBig },
    });
    expect(res.status).toBe(422);
    expect(res.json.error.code).toBe('HTML_CONTENT_TOO_LARGE');
    const t = await saveTemplate(local, owner.session, {});
    const edit = await patch(owner.session, t.id, { html: tooBig });
    expect(edit.json.error.code).toBe('HTML_CONTENT_TOO_LARGE');
  });
});

describe('lists of large templates', () => {
  it('stop a page where the next template would take the answer past 5 MiB, and page on by offset', {
    timeout: 180_000,
  }, async () => {
    const owner = await newAccount(local);
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      // Quotes and newlines are escaped twice in the Lambda result, so each weighs over 1 MiB there.
      const html = templateOfSize(MiB, 100 + i, `Listed ${i}`);
      ids.push((await saveTemplate(local, owner.session, { name: `big ${i}`, html, is_public: true })).id);
    }
    const newestFirst = [...ids].reverse();
    const weightOf = async (id: string) =>
      payloadBytes((await local.api(`/v1/templates/${id}`, { token: owner.session })).json);

    const pageSizes = new Map<string, number[]>();
    for (const path of ['/v1/templates', '/v1/templates/public']) {
      const seen: string[] = [];
      const sizes: number[] = [];
      for (let offset = 0, pages = 0; ; pages++) {
        expect(pages).toBeLessThan(20);
        const res = await local.api(`${path}?limit=100&offset=${offset}`, { token: owner.session });
        expect(res.status, res.text.slice(0, 300)).toBe(200);
        const page: Json[] = res.json;
        if (page.length === 0) break;
        sizes.push(page.length);
        // Within the budget, and the whole Lambda result under Lambda's 6 MB.
        const weights = page.map(payloadBytes);
        expect(arrayPayloadBytes(weights)).toBeLessThanOrEqual(ANSWER_BUDGET_BYTES);
        expect(payloadBytes(page)).toBeLessThan(6 * MiB);
        const ours = page.filter((t) => ids.includes(t.id)).map((t) => t.id);
        seen.push(...ours);
        // Cut short only because the next one would not have fitted.
        const nextId = newestFirst[seen.length];
        if (path === '/v1/templates' && nextId !== undefined) {
          expect(page.length).toBeLessThan(6);
          expect(arrayPayloadBytes([...weights, await weightOf(nextId)])).toBeGreaterThan(
            ANSWER_BUDGET_BYTES,
          );
        }
        offset += page.length;
      }
      expect(seen).toEqual(newestFirst);
      pageSizes.set(path, sizes);
    }
    // Six templates of 1 MiB never come in one answer: 5 MiB holds four of these.
    expect(pageSizes.get('/v1/templates')).toEqual([4, 2]);
  });
});

describe('versions', () => {
  it('an edit of the name keeps the version; old versions render exactly as they were', {
    timeout: 60_000,
  }, async () => {
    const owner = await newAccount(local);
    const t = await saveTemplate(local, owner.session, { html: '<p>Version one for {{ who }}</p>' });
    const v2 = await patch(owner.session, t.id, { html: '<p>Version two for {{ who }} in {{ town }}</p>' });
    expect(v2.json).toMatchObject({ version: 2, variables: ['town', 'who'] });
    const renamed = await patch(owner.session, t.id, { name: 'Renamed' });
    expect(renamed.json).toMatchObject({ name: 'Renamed', version: 2, variables: ['town', 'who'] });

    const latest = await render(owner.session, {
      template_id: t.id,
      variables: { who: 'Ada', town: 'Paris' },
    });
    expect(latest.json).toMatchObject({ template_version: 2 });
    expect(await pdfText(latest.json)).toContain('Version two for Ada in Paris');
    // Version 1 needs only `who`: its own variables, not the latest's.
    const first = await render(owner.session, {
      template_id: t.id,
      template_version: 1,
      variables: { who: 'Ada' },
    });
    expect(first.status, first.text).toBe(201);
    expect(first.json).toMatchObject({ template_id: t.id, template_version: 1 });
    const firstText = await pdfText(first.json);
    expect(firstText).toContain('Version one for Ada');
    expect(firstText).not.toContain('Version two');

    // The jobs keep the version they rendered, read back and listed.
    const read = await local.api(`/v1/pdf/${first.json.id}`, { token: owner.session });
    expect(read.json).toMatchObject({ template_id: t.id, template_version: 1 });
    const jobs = (await local.api('/v1/pdf', { token: owner.session })).json;
    expect(jobs.map((j: Json) => [j.template_id, j.template_version])).toEqual([
      [t.id, 1],
      [t.id, 2],
    ]);
    const inline = await render(owner.session, { html: '<p>inline</p>' });
    expect(inline.json).toMatchObject({ template_id: null, template_version: null });
  });

  it('two concurrent edits of html both land, as separate versions', { timeout: 60_000 }, async () => {
    const owner = await newAccount(local);
    const t = await saveTemplate(local, owner.session, { html: '<p>base</p>' });
    // Large enough that writing each version takes a while, so the two really overlap.
    const htmlOf = (label: string, seed: number) => `<p>Edit ${label}</p><!--${noise(400_000, seed)}-->`;
    const [a, b] = await Promise.all([
      patch(owner.session, t.id, { html: htmlOf('A', 1) }),
      patch(owner.session, t.id, { html: htmlOf('B', 2) }),
    ]);
    expect(a?.status, a?.text.slice(0, 300)).toBe(200);
    expect(b?.status, b?.text.slice(0, 300)).toBe(200);
    expect([a?.json.version, b?.json.version].sort()).toEqual([2, 3]);

    for (const [answer, label] of [
      [a?.json, 'A'],
      [b?.json, 'B'],
    ] as const) {
      const job = await render(owner.session, { template_id: t.id, template_version: answer.version });
      expect(job.status, job.text).toBe(201);
      expect(await pdfText(job.json)).toContain(`Edit ${label}`);
    }
    const current = (await local.api(`/v1/templates/${t.id}`, { token: owner.session })).json;
    expect(current.version).toBe(3);
    expect(current.html).toBe([a?.json, b?.json].find((x) => x.version === 3).html);
  });
});

describe('deleting and hiding', () => {
  it('deleting a template leaves the jobs rendered from it and their files; the template and its versions go', {
    timeout: 60_000,
  }, async () => {
    const owner = await newAccount(local);
    const t = await saveTemplate(local, owner.session, { html: '<p>Kept after delete for {{ who }}</p>' });
    await patch(owner.session, t.id, { html: '<p>Second version for {{ who }}</p>' });
    const job = (
      await render(owner.key, { template_id: t.id, template_version: 1, variables: { who: 'Lin' } })
    ).json;

    const deleted = await local.api(`/v1/templates/${t.id}`, { method: 'DELETE', token: owner.session });
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect(await tableItems(t.id)).toEqual([]);

    const after = await local.api(`/v1/pdf/${job.id}`, { token: owner.session });
    expect(after.json).toMatchObject({ status: 'completed', template_id: t.id, template_version: 1 });
    expect(await pdfText(after.json)).toContain('Kept after delete for Lin');

    for (const res of [
      await local.api(`/v1/templates/${t.id}`, { token: owner.session }),
      await local.api(`/v1/templates/${t.id}`, { method: 'DELETE', token: owner.session }),
      await render(owner.session, { template_id: t.id, variables: { who: 'x' } }),
    ]) {
      expect(res.status).toBe(404);
      expect(res.json.error.code).toBe('PDF_TEMPLATE_NOT_FOUND');
    }
  });

  it('making a public template private stops other accounts on the very next request', {
    timeout: 60_000,
  }, async () => {
    const owner = await newAccount(local, 'owner');
    const other = await newAccount(local, 'other');
    const t = await saveTemplate(local, owner.session, { html: '<p>Shared {{ who }}</p>', is_public: true });
    expect(
      (await render(other.key, { template_id: t.id, template_version: 1, variables: { who: 'x' } })).status,
    ).toBe(201);

    const hidden = await local.api(`/v1/templates/${t.id}/visibility`, {
      method: 'PATCH',
      token: owner.session,
      body: { is_public: false },
    });
    expect(hidden.json.is_public).toBe(false);
    for (const res of [
      await render(other.key, { template_id: t.id, variables: { who: 'x' } }),
      await render(other.session, { template_id: t.id, template_version: 1, variables: { who: 'x' } }),
      await local.api(`/v1/templates/${t.id}`, { token: other.key }),
    ]) {
      expect(res.status).toBe(404);
      expect(res.json.error.code).toBe('PDF_TEMPLATE_NOT_FOUND');
    }
    const publicIds = (await local.api('/v1/templates/public?limit=100', { token: other.key })).json.map(
      (x: Json) => x.id,
    );
    expect(publicIds).not.toContain(t.id);
    // The owner still renders it.
    expect((await render(owner.key, { template_id: t.id, variables: { who: 'x' } })).status).toBe(201);
  });
});
