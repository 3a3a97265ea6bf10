/**
 * A saved template's sample data (`sample_variables`) and render options (`pdf_options`) over
 * HTTP against the real local stack: set on create and PATCH, returned on every read (public and
 * listed too), versioned with the html, checked like POST /v1/pdf's own fields, and a template_id
 * render taking the saved options as defaults under its own.
 */
import { generateKeyPairSync } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { templateSchema } from '../../functions/templates/routes.js';
import { type ApiResponse, useLocalStack } from '../helpers/local-stack.js';
import { PAPER_SIZES_PT, readPdf } from '../helpers/pdf.js';
import { readNavigation } from '../helpers/pdf-navigation.js';
import { certificateFor } from '../helpers/signing-keys.js';
import { newAccount, type TestAccount } from '../helpers/template-fixtures.js';

const local = useLocalStack();

let owner: TestAccount;
let other: TestAccount;
beforeAll(async () => {
  [owner, other] = await Promise.all([newAccount(local, 'sample'), newAccount(local, 'sample-other')]);
});

const SAMPLE = { customer: 'Grace Hopper', lines: [{ item: 'Pens', price: 3.5 }] };
const HTML = '<h1>Dear {{ customer }}</h1>{% for line in lines %}<p>{{ line.item }}</p>{% endfor %}';

const create = (body: Record<string, unknown>, token = owner.session) =>
  local.api('/v1/templates', { method: 'POST', token, body: { name: 'Letter', html: HTML, ...body } });
const patch = (id: string, body: Record<string, unknown>) =>
  local.api(`/v1/templates/${id}`, { method: 'PATCH', token: owner.session, body });
const render = (body: Record<string, unknown>, token = owner.key) =>
  local.api('/v1/pdf', { method: 'POST', token, body });

const created = async (body: Record<string, unknown>) => {
  const res = await create(body);
  expect(res.status, res.text).toBe(201);
  return res.json;
};

const pdfBytes = async (res: ApiResponse): Promise<Uint8Array> => {
  expect(res.status, res.text).toBe(201);
  return new Uint8Array(await (await fetch(res.json.download_url)).arrayBuffer());
};

const expectError = (res: ApiResponse, code: string, field: string, issue?: string | RegExp) => {
  expect(res.status, res.text).toBe(422);
  expect(res.json.error.code).toBe(code);
  expect(res.json.error.details).toContainEqual(
    expect.objectContaining({ field, ...(issue ? { issue: expect.stringMatching(issue) } : {}) }),
  );
};

describe('sample_variables', () => {
  it('is saved on create and answered by every read: the owner, a key, lists, another account when public', async () => {
    const t = await created({ sample_variables: SAMPLE, is_public: true });
    expect(() => templateSchema.strict().parse(t)).not.toThrow();
    expect(t).toMatchObject({ sample_variables: SAMPLE, pdf_options: null, version: 1 });
    for (const token of [owner.session, owner.key, other.session, other.key]) {
      expect((await local.api(`/v1/templates/${t.id}`, { token })).json.sample_variables).toEqual(SAMPLE);
    }
    const own = await local.api('/v1/templates?limit=100', { token: owner.session });
    expect(own.json.find((x: { id: string }) => x.id === t.id)?.sample_variables).toEqual(SAMPLE);
    const publicList = await local.api('/v1/templates/public?limit=100', { token: other.key });
    expect(publicList.json.find((x: { id: string }) => x.id === t.id)?.sample_variables).toEqual(SAMPLE);
  });

  it('is null when none is saved', async () => {
    expect((await created({})).sample_variables).toBeNull();
  });

  it('is versioned with the html: a change alone makes a new version, an earlier version keeps its own', async () => {
    const t = await created({ sample_variables: SAMPLE });
    const changed = { customer: 'Ada', lines: [] };
    const v2 = await patch(t.id, { sample_variables: changed });
    expect(v2.status, v2.text).toBe(200);
    expect(v2.json).toMatchObject({ version: 2, sample_variables: changed, html: HTML });
    // A new html keeps the sample it had.
    const v3 = await patch(t.id, { html: `${HTML}<p>PS</p>` });
    expect(v3.json).toMatchObject({ version: 3, sample_variables: changed });
    const v4 = await patch(t.id, { sample_variables: null });
    expect(v4.json).toMatchObject({ version: 4, sample_variables: null });
    // Only a name: the same version, the same sample.
    const renamed = await patch(t.id, { name: 'Renamed' });
    expect(renamed.json).toMatchObject({ version: 4, sample_variables: null });
    // A version's sample is read with that version: render version 1 with its own sample.
    const stack = local.stack;
    const { createTemplateStore } = await import('../../functions/adapters/dynamodb/templates.js');
    const { dynamoDbClient } = await import('../helpers/local-stack.js');
    const { DynamoDBDocumentClient } = await import('@aws-sdk/lib-dynamodb');
    const store = createTemplateStore(DynamoDBDocumentClient.from(dynamoDbClient(stack)), stack.tableName, {
      now: () => new Date(),
    });
    // Stored as the text sent (JsonText), which reads back as the same JSON.
    const sampleOf = async (v: number) =>
      JSON.parse((await store.getReadable(t.id, owner.id, v)).sample_variables?.text ?? 'null');
    expect(await sampleOf(1)).toEqual(SAMPLE);
    expect(await sampleOf(2)).toEqual(changed);
  });

  it.each([
    ['not an object', [1, 2], 'must be an object'],
    ['nested deeper than 64 levels', JSON.parse(`${'{"a":'.repeat(65)}1${'}'.repeat(65)}`), /64 levels/],
    ['over the variables size limit', { big: 'x'.repeat(1024 * 1024) }, /bytes as JSON/],
  ])('is refused when %s, on create and on PATCH (VALIDATION_ERROR)', async (_, sample, issue) => {
    expectError(await create({ sample_variables: sample }), 'VALIDATION_ERROR', 'sample_variables', issue);
    const t = await created({});
    expectError(
      await patch(t.id, { sample_variables: sample }),
      'VALIDATION_ERROR',
      'sample_variables',
      issue,
    );
  });

  it('counts as a change for PATCH: a body of only sample_variables is accepted, an empty one refused', async () => {
    const t = await created({});
    expect((await patch(t.id, { sample_variables: { a: 1 } })).status).toBe(200);
    const empty = await patch(t.id, {});
    expect(empty.status).toBe(422);
    expect(empty.json.error.details[0].issue).toMatch(/sample_variables and pdf_options/);
  });
});

describe('sample_variables as JSON means them (issue 22)', () => {
  /** As a user writes it: years in their own order, a float written 10.0, an order number of 18 digits. */
  const SAMPLE_TEXT =
    '{"totals": {"2024": 5, "2023": 4, "2019": 1}, "n": 10.0, "grams": 1e3, "id": 123456789012345678}';
  /** The same, as every answer writes it: the whitespace between tokens gone, nothing else changed. */
  const ANSWERED =
    '"sample_variables":{"totals":{"2024":5,"2023":4,"2019":1},"n":10.0,"grams":1e3,"id":123456789012345678}';
  const SHOW =
    '<p>{% for y, t in totals.items() %}[{{ y }}:{{ t }}]{% endfor %} {{ n }} {{ grams }} {{ id }} {{ id + 1 }}</p>';
  /** A body written as text: a JavaScript object could not even hold the sample. */
  const sent = (fields: Record<string, unknown>, sample: string) =>
    `{${JSON.stringify(fields).slice(1, -1)}${Object.keys(fields).length ? ', ' : ''}"sample_variables": ${sample}}`;
  const JSON_TYPE = { 'content-type': 'application/json' };

  it('keeps key order, 10.0, 1e3 and big integers on create, PATCH, every read and list, and renders with them exactly', async () => {
    const res = await local.api('/v1/templates', {
      method: 'POST',
      token: owner.session,
      headers: JSON_TYPE,
      body: sent({ name: 'By year', html: SHOW, is_public: true }, SAMPLE_TEXT),
    });
    expect(res.status, res.text).toBe(201);
    expect(res.text).toContain(ANSWERED);
    const id = res.json.id as string;
    for (const token of [owner.session, owner.key, other.key]) {
      expect((await local.api(`/v1/templates/${id}`, { token })).text).toContain(ANSWERED);
    }
    expect((await local.api('/v1/templates?limit=100', { token: owner.session })).text).toContain(ANSWERED);
    expect((await local.api('/v1/templates/public?limit=100', { token: other.key })).text).toContain(
      ANSWERED,
    );

    // Rendered with the sample as read back, as the dashboard's preview and snippets send it.
    const read = await local.api(`/v1/templates/${id}`, { token: owner.key });
    const sample = ANSWERED.slice('"sample_variables":'.length);
    expect(read.text).toContain(sample);
    const rendered = await local.api('/v1/pdf', {
      method: 'POST',
      token: owner.key,
      headers: JSON_TYPE,
      body: `{"template_id": ${JSON.stringify(id)}, "variables": ${sample}}`,
    });
    const text = (await readPdf(await pdfBytes(rendered))).text;
    expect(text).toContain('[2024:5][2023:4][2019:1] 10.0 1000.0 123456789012345678 123456789012345679');

    // A PATCH keeps them as sent too, in a new version; the earlier version keeps its own.
    const edited = await local.api(`/v1/templates/${id}`, {
      method: 'PATCH',
      token: owner.session,
      headers: JSON_TYPE,
      body: sent({}, '{"totals": {"10": 1, "9": 2}, "n": -0.0, "e": 2E-3}'),
    });
    expect(edited.status, edited.text).toBe(200);
    expect(edited.text).toContain('"sample_variables":{"totals":{"10":1,"9":2},"n":-0.0,"e":2E-3}');
    expect(edited.json.version).toBe(2);
  });

  it('keeps spaces inside strings and escapes as sent', async () => {
    const res = await local.api('/v1/templates', {
      method: 'POST',
      token: owner.session,
      headers: JSON_TYPE,
      body: sent(
        { name: 'Strings', html: '<p>{{ a }}</p>' },
        '{ "a" : "x  \\" y\\u00e9 }" , "b":[ 1 , 2 ] }',
      ),
    });
    expect(res.status, res.text).toBe(201);
    expect(res.text).toContain('"sample_variables":{"a":"x  \\" y\\u00e9 }","b":[1,2]}');
    expect(res.json.sample_variables).toEqual({ a: 'x  " yé }', b: [1, 2] });
  });
});

describe('pdf_options', () => {
  it('is saved, answered, versioned, and replaced whole by a PATCH', async () => {
    const options = { format: 'A5', landscape: true, margins: { top: 1 }, outline: true };
    const t = await created({ pdf_options: options });
    expect(t).toMatchObject({ pdf_options: options, version: 1 });
    expect((await local.api(`/v1/templates/${t.id}`, { token: owner.key })).json.pdf_options).toEqual(
      options,
    );
    const v2 = await patch(t.id, { pdf_options: { format: 'LETTER' } });
    expect(v2.json).toMatchObject({ version: 2, pdf_options: { format: 'LETTER' } });
    const v3 = await patch(t.id, { pdf_options: null });
    expect(v3.json).toMatchObject({ version: 3, pdf_options: null });
  });

  it.each([
    ['an unknown paper', { format: 'B5' }, 'pdf_options.format', /must be one of/],
    ['a margin out of range', { margins: { left: 11 } }, 'pdf_options.margins.left', /inches from 0 to 10/],
    ['a non-boolean outline', { outline: 'yes' }, 'pdf_options.outline', 'must be true or false'],
    ['a non-boolean paged_media', { paged_media: 1 }, 'pdf_options.paged_media', 'must be true or false'],
    ['an unknown field', { scale: 2 }, 'pdf_options.scale', 'is not a known field'],
    [
      'margins that leave no page',
      { format: 'A5', margins: { left: 3, right: 3 } },
      'pdf_options.margins',
      /no printable area/,
    ],
  ])('refuses %s (INVALID_PDF_OPTIONS), on create and on PATCH', async (_, options, field, issue) => {
    expectError(await create({ pdf_options: options }), 'INVALID_PDF_OPTIONS', field, issue);
    const t = await created({});
    expectError(await patch(t.id, { pdf_options: options }), 'INVALID_PDF_OPTIONS', field, issue);
  });

  it("are a template_id render's defaults; the render's own values win, margin by margin", async () => {
    const t = await created({
      sample_variables: SAMPLE,
      pdf_options: { format: 'A5', landscape: true, margins: { top: 1, left: 1 } },
      is_public: true,
    });
    const a5 = PAPER_SIZES_PT.A5;
    const near = (a: number | undefined, b: number) => Math.abs((a ?? 0) - b) <= 1;

    // The saved options: A5 landscape, for the owner and for another account rendering it.
    for (const token of [owner.key, other.key]) {
      const [page] =
        // Another account's render names the version, as it must (pinned).
        (
          await readPdf(
            await pdfBytes(
              await render({ template_id: t.id, template_version: t.version, variables: SAMPLE }, token),
            ),
          )
        ).pages;
      expect(near(page?.widthPt, a5.heightPt) && near(page?.heightPt, a5.widthPt), JSON.stringify(page)).toBe(
        true,
      );
    }
    // The render's own: portrait wins over the saved landscape; the format stays the template's.
    const [portrait] = (
      await readPdf(await pdfBytes(await render({ template_id: t.id, variables: SAMPLE, landscape: false })))
    ).pages;
    expect(near(portrait?.widthPt, a5.widthPt) && near(portrait?.heightPt, a5.heightPt)).toBe(true);
    // A render's margin that, with the saved ones, leaves no page: the merged options are checked.
    expectError(
      await render({ template_id: t.id, variables: SAMPLE, margins: { right: 7.3 } }),
      'INVALID_PDF_OPTIONS',
      'margins',
      /no printable area/,
    );
    // Without the saved left margin of 1 inch, 7.2 would fit on A5 landscape (8.27 in wide).
    expect(
      (await render({ template_id: t.id, variables: SAMPLE, margins: { right: 7.2, left: 0 } })).status,
    ).toBe(201);
  });

  it('are read with the version rendered', async () => {
    const t = await created({ sample_variables: SAMPLE, pdf_options: { outline: true } });
    await patch(t.id, { pdf_options: { outline: false } });
    const html = '<h1>One</h1><h2>Two</h2>';
    await patch(t.id, { html });
    const outlineOf = async (version: number | undefined) =>
      (
        await readNavigation(
          await pdfBytes(
            await render({
              template_id: t.id,
              ...(version ? { template_version: version } : {}),
              variables: SAMPLE,
            }),
          ),
        )
      ).outline.map((e) => e.title);
    // Version 1: its html, with its outline option.
    expect(await outlineOf(1)).toEqual(['Dear Grace Hopper']);
    // The latest: outline off, as version 2 set it and version 3 kept it.
    expect(await outlineOf(undefined)).toEqual([]);
  });
});

describe('pdf_options.signature', () => {
  /** A PEM key registered with POST /v1/signing-keys by `token`'s account: its id. */
  const registerKey = async (token: string): Promise<string> => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const res = await local.api('/v1/signing-keys', {
      method: 'POST',
      token,
      body: {
        name: 'letters',
        private_key_pem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
        certificate_pem: await certificateFor(privateKey, '/CN=Letters'),
      },
    });
    expect(res.status, res.text).toBe(201);
    return res.json.id;
  };
  const signed = (key_id: string) => ({ signature: { key_id, reason: 'Approved' } });

  it("refuses a key that is another account's or unknown at save (422 naming pdf_options.signature.key_id), nothing saved; a key deleted later fails the render", async () => {
    const [own, others] = await Promise.all([registerKey(owner.session), registerKey(other.session)]);
    const listed = async () =>
      (await local.api('/v1/templates?limit=100', { token: owner.session })).json.map(
        (t: { id: string }) => t.id,
      );
    const before = await listed();
    for (const key_id of [others, 'sk_01JAAAAAAAAAAAAAAAAAAAAAAA']) {
      expectError(
        await create({ pdf_options: signed(key_id) }),
        'INVALID_SIGNING_KEY',
        'pdf_options.signature.key_id',
        'is not one of your signing keys',
      );
    }
    expect(await listed()).toEqual(before);

    const t = await created({ sample_variables: SAMPLE, pdf_options: signed(own) });
    expect(t.pdf_options).toEqual(signed(own));
    for (const body of [
      { pdf_options: signed(others) },
      { html: '<p>{{ customer }}</p>', pdf_options: signed(others) },
    ]) {
      expectError(await patch(t.id, body), 'INVALID_SIGNING_KEY', 'pdf_options.signature.key_id');
    }
    expect((await local.api(`/v1/templates/${t.id}`, { token: owner.session })).json).toMatchObject({
      version: 1,
      html: HTML,
      pdf_options: signed(own),
    });

    // The key deleted: the template keeps it, and its renders are refused (before any charge).
    expect(
      (await local.api(`/v1/signing-keys/${own}`, { method: 'DELETE', token: owner.session })).status,
    ).toBe(200);
    expectError(
      await render({ template_id: t.id, variables: SAMPLE }),
      'INVALID_SIGNING_KEY',
      'signature.key_id',
    );
  });
});
