/**
 * Hostile input on every route of the route table (templates, keys, ... included as they are
 * declared): whatever the body, query or path holds (depth, size, types, unicode, NUL, lone
 * surrogates), the answer is a 4xx with a named code, never a 5xx; and every answer carries
 * `X-Content-Type-Options: nosniff` and `Cache-Control: no-store`.
 */
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { resources, routeKey, routes } from '../../functions/routes.js';
import { settingsSchema } from '../../functions/settings.js';
import { eachInLanes, lanes } from '../helpers/lanes.js';
import { type ApiResponse, useLocalStack } from '../helpers/local-stack.js';
import { inThisPart, rotation, SWEEP_PART } from '../helpers/sweep-part.js';

const local = useLocalStack({ plan: 'roomy' });

/** JSON text nesting `depth` objects or arrays around `leaf`, built as text: no recursion anywhere. */
const nested = (depth: number, leaf: string, kind: 'object' | 'array'): string =>
  kind === 'object'
    ? `${'{"a":'.repeat(depth)}${leaf}${'}'.repeat(depth)}`
    : `${'['.repeat(depth)}${leaf}${']'.repeat(depth)}`;

/** Values for any field, as JSON text: wrong types, extremes, and strings no one should have to handle. */
const HOSTILE_VALUES: readonly string[] = [
  'null',
  'true',
  '-1',
  '1e308',
  '1e400',
  '9007199254740993',
  '0.5',
  '""',
  '" "',
  '"\u0000"',
  '"a\u0000b"',
  '"\ud800"',
  '"\udfff\ud800"',
  JSON.stringify('😀'.repeat(1000)),
  '"\u202e\u200b\ufeff"',
  '"<script>alert(1)</script>"',
  '"{{ 7*7 }}"',
  // 300,000 characters, as an HTML comment: a long value in every field, which a field that renders
  // HTML renders as nothing. As text, Chromium's layout of it would be the cost, not the input's
  // (one unbreakable word of it is 9-12 s: test/integration/hostile-pages.test.ts).
  JSON.stringify(`<!--${'x'.repeat(300_000)}-->`),
  '[]',
  '[1, "a", null]',
  '{}',
  '{"__proto__": {"polluted": true}, "constructor": {"prototype": {"x": 1}}}',
  nested(10_000, '1', 'object'),
  nested(10_000, '1', 'array'),
  nested(65, '"deep"', 'object'),
];

/** Whole bodies that are not the object a route wants. */
const HOSTILE_BODIES: readonly string[] = [
  '',
  'null',
  '[]',
  '"text"',
  '{',
  '{"a":1,"a":2}',
  nested(10_000, '1', 'object'),
  nested(10_000, '1', 'array'),
  `{"html":"${'\\ud800'.repeat(1000)}"}`,
  '\u0000',
];

const settings = settingsSchema.parse({});

const bodyFields = (route: (typeof routes)[number]): string[] => {
  const declaration = resources.find((r) => r.name === route.resource)?.routes[route.name ?? ''];
  const schema = declaration?.body?.schema(settings) as z.ZodType | undefined;
  const shape = (schema as unknown as { shape?: Record<string, unknown> } | undefined)?.shape;
  return shape ? Object.keys(shape) : [];
};

/** Whether the route declares a query (the lists: limit, offset). */
const readsQuery = (route: (typeof routes)[number]): boolean =>
  resources.find((r) => r.name === route.resource)?.routes[route.name ?? '']?.query !== undefined;

/** Values with `%` are already percent-encoded (some, like a lone surrogate, cannot be encoded). */
const pathOf = (path: string, value: string) =>
  path.replace(/\{[^}]+\}/g, value.includes('%') ? value : encodeURIComponent(value));

const expectNamed4xx = (res: ApiResponse, what: string) => {
  expect(res.status, `${what}: ${res.status} ${res.text.slice(0, 300)}`).toBeLessThan(500);
  if (res.status >= 400) expect(res.json?.error?.code, what).toMatch(/^[A-Z_]+$/);
};

const expectSafeHeaders = (res: ApiResponse, what: string) => {
  expect(res.headers.get('x-content-type-options'), what).toBe('nosniff');
  expect(res.headers.get('cache-control'), what).toBe('no-store');
};

/**
 * A render the renderer had no room for (503 SERVICE_BUSY: back-pressure, which says when to come
 * back) is sent again after its Retry-After, as a client does: two render routes (POST /v1/pdf and
 * POST /v1/previews) in the two lanes at once fill a 2-core machine's renderer. Any other answer,
 * and a renderer still busy after five tries, is judged as it is.
 */
const untilNotBusy = async (send: () => Promise<ApiResponse>): Promise<ApiResponse> => {
  for (let tries = 1; ; tries++) {
    const res = await send();
    if (res.status !== 503 || res.json?.error?.code !== 'SERVICE_BUSY' || tries >= 5) return res;
    await new Promise((r) => setTimeout(r, Number(res.headers.get('retry-after') ?? 2) * 1000));
  }
};

// Each test has an account of its own: two run at a time, each sending its own requests six at a
// time (a test mostly waits for answers, most of them quick refusals).
const twoAtATime = lanes(2);

/** The sample (test/helpers/sweep-part.ts): every third value of each field, rotating per field. */
const everyThird = rotation(3);
/** Each route's hostile fields and values in this part of the sweep. */
const fieldCases = (route: (typeof routes)[number]) =>
  bodyFields(route).flatMap((field, f) =>
    HOSTILE_VALUES.flatMap((value, v) => (inThisPart(everyThird(v, f)) ? [{ field, value }] : [])),
  );
/** Each route's hostile paths and queries in this part: every other one, rotating per value. */
const everyOther = rotation(2);
const PATH_VALUES = ['..', '%00', '%ED%A0%80', '%FF', 'x'.repeat(5000), '😀', '<>', "'", 'null'];
const QUERIES = [
  '',
  '?limit=1e3',
  '?offset=-0',
  '?limit=%00',
  `?limit=${'9'.repeat(400)}`,
  '?offset=99999999',
];
const pathCases = (route: (typeof routes)[number]) => {
  // Hostile queries on every path of the routes that read a query (the lists); elsewhere a query is
  // not read, and one hostile query on each hostile path shows it is ignored.
  const reads = readsQuery(route);
  return PATH_VALUES.flatMap((value, v) =>
    (reads ? QUERIES : [QUERIES[v % QUERIES.length] as string]).flatMap((query, q) =>
      inThisPart(everyOther(q, v)) ? [{ path: pathOf(route.path, value), query }] : [],
    ),
  );
};

describe.concurrent('hostile input', () => {
  const withBody = routes.filter(
    (r) =>
      r.method !== 'GET' && r.method !== 'DELETE' && (SWEEP_PART === 'sample' || fieldCases(r).length > 0),
  );

  // Hundreds of requests, some of them renders: minutes on a busy machine.
  it.each(withBody.map((r) => [routeKey(r), r] as const))(
    '%s: hostile values in every field, and hostile bodies, answer a named 4xx',
    { timeout: 300_000 },
    (_key, route) =>
      twoAtATime(async () => {
        const token = await local.sessionToken();
        const path = pathOf(route.path, 'tpl_01J0000000000000000000000');
        const cases = fieldCases(route);
        // Six at a time: hundreds of requests, some of them renders, one after another take minutes.
        await eachInLanes(cases, 6, async ({ field, value }) => {
          const body = `{${field === 'html' ? '' : '"html":"<p>x</p>",'}${JSON.stringify(field)}:${value}}`;
          const res = await untilNotBusy(() =>
            local.api(path, {
              method: route.method,
              token,
              body,
              headers: { 'content-type': 'application/json' },
            }),
          );
          expectNamed4xx(res, `${field}=${value.slice(0, 60)}`);
          expectSafeHeaders(res, field);
        });
        // Whole hostile bodies: in the sample.
        await eachInLanes(SWEEP_PART === 'sample' ? HOSTILE_BODIES : [], 6, async (body) => {
          const res = await local.api(path, {
            method: route.method,
            token,
            body,
            headers: { 'content-type': 'application/json' },
          });
          expectNamed4xx(res, `body ${body.slice(0, 60)}`);
        });
      }),
  );

  it.each(routes.filter((r) => pathCases(r).length > 0).map((r) => [routeKey(r), r] as const))(
    '%s: hostile path parameters and query strings answer a named 4xx',
    (_key, route) =>
      twoAtATime(async () => {
        const token = await local.sessionToken();
        const cases = pathCases(route);
        await eachInLanes(cases, 6, async ({ path, query }) => {
          const res = await local.api(`${path}${query}`, {
            method: route.method,
            token,
            ...(route.method === 'GET' || route.method === 'DELETE' ? {} : { body: {} }),
          });
          expectNamed4xx(res, `${path.slice(0, 60)}${query}`);
          expectSafeHeaders(res, path.slice(0, 60));
        });
      }),
  );

  if (SWEEP_PART === 'sample') {
    it('bounds the nesting of variables: 64 levels render, deeper answers 422 INVALID_PDF_OPTIONS', () =>
      twoAtATime(async () => {
        const token = await local.sessionToken();
        const ok = await local.api('/v1/pdf', {
          method: 'POST',
          token,
          body: { html: '<p>{{ v.a.a }}</p>', variables: { v: JSON.parse(nested(62, '"leaf"', 'object')) } },
        });
        expect(ok.status, ok.text).toBe(201);
        for (const kind of ['object', 'array'] as const) {
          const res = await local.api('/v1/pdf', {
            method: 'POST',
            token,
            body: `{"html":"<p>x</p>","variables":{"v":${nested(10_000, '1', kind)}}}`,
            headers: { 'content-type': 'application/json' },
          });
          expect(res.status, res.text.slice(0, 200)).toBe(422);
          expect(res.json.error).toMatchObject({
            code: 'INVALID_PDF_OPTIONS',
            details: [{ field: 'variables' }],
          });
          expect(res.json.error.message).toMatch(/64 levels/);
        }
      }));

    it('puts nosniff and no-store on every kind of answer: 201, 200, 401, 404, 405, 413, 422', () =>
      twoAtATime(async () => {
        const token = await local.sessionToken();
        const answers = [
          await local.api('/v1/pdf', { method: 'POST', token, body: { html: '<p>hi</p>' } }),
          await local.api('/v1/pdf', { token }),
          await local.api('/v1/pdf'),
          await local.api('/v1/nowhere', { token }),
          await local.api('/v1/pdf', { method: 'DELETE', token }),
          await local.api('/v1/pdf', {
            method: 'POST',
            token,
            body: 'x'.repeat(11 * 1024 * 1024),
            headers: { 'content-type': 'application/json' },
          }),
          await local.api('/v1/pdf', { method: 'POST', token, body: { html: '' } }),
        ];
        expect(answers.map((a) => a.status)).toEqual([201, 200, 401, 404, 405, 413, 422]);
        for (const res of answers) expectSafeHeaders(res, String(res.status));
      }));
  }
});
