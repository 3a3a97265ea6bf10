/**
 * The error walk (issue 41): every route of the route table × the mistakes a new user makes, over
 * HTTP against the local stack. Each mistake answers one code on every route, and a message that
 * says what was sent and what to do instead:
 *
 *   an API key's id (key_…) sent as the key      401 INVALID_API_KEY        "…id…, not the key…"
 *   a revoked API key                           401 INVALID_API_KEY        "…revoked at <time>…"
 *   an expired session token                    401 INVALID_SESSION_TOKEN  "…expired at <time>…"
 *   a token of neither shape                    401 INVALID_SESSION_TOKEN  "…neither an API key…"
 *   a body over the limit                       413 REQUEST_TOO_LARGE      "…6 MiB…"
 *   a multipart/form-data body                  400 INVALID_JSON           "…takes JSON…"
 *   a body that is not JSON                     400 INVALID_JSON           "…line 1, column N…"
 *   an unknown field, a known one spelled apart 422 (the field's code)     "did you mean …?"
 *
 * The last: a render option in puppeteer's spelling (`printBackground`) is INVALID_PDF_OPTIONS on
 * every route that takes render options (a template's, beside `pdf_options` instead of in it,
 * too); another field misspelled is VALIDATION_ERROR, as it was. Nothing is created or counted.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { openApiDocument } from '../../functions/openapi.js';
import { type Route, routeKey, routes } from '../../functions/routes.js';
import { type ApiResponse, type Json, useLocalStack } from '../helpers/local-stack.js';

const local = useLocalStack();

/** A concrete path for a route: each `{param}` filled with a placeholder that names nothing. */
const pathOf = (route: Route) => route.path.replace(/\{(\w+)\+?\}/g, 'walk-placeholder');

/**
 * The routes that take a JSON body, from the OpenAPI document (built from the same declarations).
 * A file body (PUT /v1/assets/{name}) has its own refusals, in assets.test.ts.
 */
const document = openApiDocument() as Json;
const takesBody = (route: Route): boolean =>
  document.paths[route.path]?.[route.method.toLowerCase()]?.requestBody?.content?.['application/json'] !==
  undefined;
const bodyRoutes = routes.filter(takesBody);

/** Per route with a body: a body that is valid but for one field spelled as another library spells it. */
const NEAR_SPELLINGS: Readonly<Record<string, { body: Json; field: string; meant: string; code: string }>> = {
  'POST /v1/pdf': {
    body: { html: '<p>x</p>', printBackground: true },
    field: 'printBackground',
    meant: 'print_background',
    code: 'INVALID_PDF_OPTIONS',
  },
  'POST /v1/batches': {
    body: { html: '<p>x</p>', items: [{ variables: {} }], printBackground: true },
    field: 'printBackground',
    meant: 'print_background',
    code: 'INVALID_PDF_OPTIONS',
  },
  'POST /v1/templates': {
    body: { name: 'walk', html: '<p>x</p>', printBackground: true },
    field: 'printBackground',
    meant: 'pdf_options.print_background',
    code: 'INVALID_PDF_OPTIONS',
  },
  'PATCH /v1/templates/{template_id}': {
    body: { html: '<p>x</p>', printBackground: true },
    field: 'printBackground',
    meant: 'pdf_options.print_background',
    code: 'INVALID_PDF_OPTIONS',
  },
  'PATCH /v1/templates/{template_id}/visibility': {
    body: { isPublic: true },
    field: 'isPublic',
    meant: 'is_public',
    code: 'VALIDATION_ERROR',
  },
  'POST /v1/api-keys': {
    body: { name: 'walk', nmae: 'walk' },
    field: 'nmae',
    meant: 'name',
    code: 'VALIDATION_ERROR',
  },
  'POST /v1/webhooks': {
    body: { url: 'https://hooks.example.com/walk', evnets: ['job.completed'] },
    field: 'evnets',
    meant: 'events',
    code: 'VALIDATION_ERROR',
  },
  'POST /v1/signing-keys': {
    body: { name: 'walk', pkcs12_base64: 'AA==', passprase: 'x' },
    field: 'passprase',
    meant: 'passphrase',
    code: 'VALIDATION_ERROR',
  },
  'POST /v1/destinations': {
    body: { name: 'walk', bucket: 'walk-bucket', region: 'eu-west-1', key_templte: '{{ job.id }}.pdf' },
    field: 'key_templte',
    meant: 'key_template',
    code: 'VALIDATION_ERROR',
  },
  'POST /v1/previews': {
    body: { html: '<p>x</p>', printBackground: true },
    field: 'printBackground',
    meant: 'print_background',
    code: 'INVALID_PDF_OPTIONS',
  },
  'POST /v1/previews/variables': {
    body: { html: '<p>x</p>', headerHtml: '<p>h</p>' },
    field: 'headerHtml',
    meant: 'header_html',
    code: 'VALIDATION_ERROR',
  },
  'POST /v1/merges': {
    body: { parts: [{ html: '<p>a</p>' }, { html: '<p>b</p>' }], pageNumbers: 'continuous' },
    field: 'pageNumbers',
    meant: 'page_numbers',
    code: 'VALIDATION_ERROR',
  },
};

interface Credentials {
  session: string;
  keyId: string;
  revokedKey: string;
  revokedAt: string;
  expired: string;
}
let c: Credentials;
const account = `acct-walk-${randomUUID()}`;

beforeAll(async () => {
  c = { session: await local.sessionToken(account) } as Credentials;
  const made = await local.api('/v1/api-keys', { method: 'POST', token: c.session, body: { name: 'walk' } });
  expect(made.status, made.text).toBe(201);
  const revoked = await local.api(`/v1/api-keys/${made.json.id}`, { method: 'DELETE', token: c.session });
  expect(revoked.status, revoked.text).toBe(200);
  c.keyId = made.json.id;
  c.revokedKey = made.json.key;
  c.revokedAt = revoked.json.revoked_at;
  c.expired = await local.sessionToken(account, { ttlSeconds: -60 });
});

const expectError = (res: ApiResponse, status: number, code: string, message: RegExp) => {
  expect(res.status, res.text).toBe(status);
  expect(res.json.error.code, res.text).toBe(code);
  expect(res.json.error.message).toMatch(message);
};

it('walks every route, and knows a mistake for every route that takes a body', () => {
  expect(routes.length).toBeGreaterThanOrEqual(27);
  expect(bodyRoutes.map(routeKey).sort()).toEqual(Object.keys(NEAR_SPELLINGS).sort());
});

describe.each(routes.map((r) => [routeKey(r), r] as const))('%s', (_, route) => {
  const send = (authorization: string) =>
    local.api(pathOf(route), { method: route.method, headers: { authorization } });

  it("refuses an API key's id sent as the key, saying so", async () => {
    expectError(
      await send(`Bearer ${c.keyId}`),
      401,
      'INVALID_API_KEY',
      /API key's id \(key_…\), not the key/,
    );
  });

  it('refuses a revoked key, saying when it was revoked and where to make another', async () => {
    expectError(
      await send(`Bearer ${c.revokedKey}`),
      401,
      'INVALID_API_KEY',
      new RegExp(`revoked at ${c.revokedAt.replaceAll('.', '\\.')}: make a new one`),
    );
  });

  it('refuses an expired session token, saying when it expired', async () => {
    expectError(
      await send(`Bearer ${c.expired}`),
      401,
      'INVALID_SESSION_TOKEN',
      /expired at \d{4}-\d\d-\d\dT[\d:.]+Z: sign in again/,
    );
  });

  it('refuses a token of neither shape, naming both', async () => {
    expectError(
      await send('Bearer pdf-live-1234'),
      401,
      'INVALID_SESSION_TOKEN',
      /neither an API key \(pdf_live_…\) nor a session token/,
    );
  });
});

describe.each(bodyRoutes.map((r) => [routeKey(r), r] as const))('%s', (key, route) => {
  const send = (body: unknown, headers: Record<string, string> = {}) =>
    local.api(pathOf(route), { method: route.method, token: c.session, body, headers });

  it('refuses a body over the limit, stating the limit', async () => {
    const res = await send(JSON.stringify({ html: 'x'.repeat(6 * 1024 * 1024) }), {
      'content-type': 'application/json',
    });
    expectError(res, 413, 'REQUEST_TOO_LARGE', /over the limit of 6 MiB \(6,291,456 bytes\)/);
  });

  it('refuses a multipart/form-data body, telling to send JSON', async () => {
    const boundary = '----walk';
    const res = await send(
      `--${boundary}\r\nContent-Disposition: form-data; name="html"\r\n\r\n<p>x</p>\r\n--${boundary}--\r\n`,
      { 'content-type': `multipart/form-data; boundary=${boundary}` },
    );
    expectError(
      res,
      400,
      'INVALID_JSON',
      /is multipart\/form-data .*takes JSON.*Content-Type: application\/json/,
    );
  });

  it('refuses a body that is not JSON, saying where it broke', async () => {
    const res = await send('{"html": "<p>x</p>",}', { 'content-type': 'application/json' });
    expectError(res, 400, 'INVALID_JSON', /not valid JSON at line 1, column 21/);
  });

  it('refuses a known field spelled apart with "did you mean"', async () => {
    const mistake = NEAR_SPELLINGS[key];
    if (!mistake) throw new Error(`no near spelling for ${key}`);
    const res = await send(mistake.body);
    expectError(
      res,
      422,
      mistake.code,
      new RegExp(`did you mean ${mistake.meant.replaceAll('.', '\\.')}\\?`),
    );
    expect(res.json.error.details).toContainEqual({
      field: mistake.field,
      issue: `is not a known field; did you mean ${mistake.meant}?`,
    });
  });
});

it('created nothing and counted nothing', async () => {
  const usage = await local.api('/v1/usage', { token: c.session });
  expect(usage.json.renders_used).toBe(0);
  expect((await local.api('/v1/templates', { token: c.session })).json).toEqual([]);
  expect((await local.api('/v1/pdf', { token: c.session })).json).toEqual([]);
});
