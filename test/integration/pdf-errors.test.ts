/**
 * Error answers of the PDF endpoints over HTTP, each triggered for real: credentials, body,
 * validation, templating, rendering timeouts; the contract's error body and precedence.
 */
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { SignJWT } from 'jose';
import { describe, expect, it, vi } from 'vitest';
import { monthOf, usageKey } from '../../functions/adapters/dynamodb/keys.js';
import { generateApiKey } from '../../functions/domain/accounts/api-key-format.js';
import { errorSchema } from '../../functions/openapi.js';
import { LOCAL_CLIENT_ID, LOCAL_REGION, LOCAL_USER_POOL_ID } from '../../lib/local/issuer.js';
import { type ApiResponse, dynamoDbClient, useLocalStack } from '../helpers/local-stack.js';
import { descendantsOf } from '../helpers/process-tree.js';

// Its own, in a process of its own: it kills its stack's Chromium renderer processes, found among
// this process's descendants (the stack's child process and its browser).
const local = useLocalStack({ ownStack: true });

const expectError = (res: ApiResponse, status: number, code: string) => {
  expect(res.status, res.text).toBe(status);
  expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
  expect(res.json.error.code).toBe(code);
  expect(() => errorSchema.parse(res.json)).not.toThrow(); // as the OpenAPI document says
  expect(res.json.error.request_id).toBe(res.headers.get('x-request-id'));
  if (status === 422) expect(res.json.error.details.length).toBeGreaterThan(0);
  expect(res.text).not.toMatch(/at .*\.(ts|js):\d+/); // never a stack trace
};

const post = async (body: unknown, token?: string, headers: Record<string, string> = {}) =>
  local.api('/v1/pdf', { method: 'POST', body, headers, ...(token ? { token } : {}) });

describe('credentials', () => {
  it('401 UNAUTHENTICATED without a usable Authorization header, with WWW-Authenticate', async () => {
    for (const authorization of [undefined, 'Basic dXNlcjpwYXNz', 'Bearer ', 'Bearer']) {
      const res = await local.api('/v1/pdf', { headers: authorization ? { authorization } : {} });
      expectError(res, 401, 'UNAUTHENTICATED');
      expect(res.headers.get('www-authenticate')).toContain('Bearer');
    }
  });

  it('401 INVALID_SESSION_TOKEN for garbage, expired, foreign-signed and wrong-audience tokens', async () => {
    const expired = await local.sessionToken(undefined, { ttlSeconds: -60 });
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const claims = { token_use: 'id', email: 'x@example.com' };
    const issuer = `https://cognito-idp.${LOCAL_REGION}.amazonaws.com/${LOCAL_USER_POOL_ID}`;
    const forged = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', kid: 'forged' })
      .setSubject('intruder')
      .setIssuer(issuer)
      .setAudience(LOCAL_CLIENT_ID)
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(privateKey);
    const good = await local.sessionToken();
    const tampered = `${good.slice(0, -4)}${good.slice(-4) === 'AAAA' ? 'BBBB' : 'AAAA'}`;
    for (const token of ['not-a-jwt', expired, forged, tampered]) {
      expectError(await local.api('/v1/pdf', { token }), 401, 'INVALID_SESSION_TOKEN');
    }
  });

  it('401 INVALID_API_KEY for unknown and malformed keys, before anything else is looked at', async () => {
    for (const key of [generateApiKey(), 'pdf_live_typo', `${generateApiKey().slice(0, -1)}x`]) {
      const res = await post('{not json', key);
      expectError(res, 401, 'INVALID_API_KEY');
      expect(res.text).not.toContain(key);
    }
  });
});

describe('body', () => {
  it('400 INVALID_JSON for a body that is not a JSON object (after credentials)', async () => {
    const token = await local.sessionToken();
    for (const body of ['{"html": ', '[1,2]', '"text"', '']) {
      expectError(await post(body, token, { 'content-type': 'application/json' }), 400, 'INVALID_JSON');
    }
    // Precedence: no credentials beats a broken body.
    expectError(await post('{"html": '), 401, 'UNAUTHENTICATED');
  });

  it('413 REQUEST_TOO_LARGE for a body over 6 MiB', async () => {
    const token = await local.sessionToken();
    const res = await post({ html: 'x'.repeat(6 * 1024 * 1024 + 10) }, token);
    expectError(res, 413, 'REQUEST_TOO_LARGE');
  });
});

describe('validation (422)', () => {
  it.each([
    ['neither html nor template_id', {}, 'INVALID_PDF_OPTIONS'],
    ['both html and template_id', { html: '<p>x</p>', template_id: 'tpl_x' }, 'INVALID_PDF_OPTIONS'],
    ['unknown field', { html: '<p>x</p>', margin: { top: 1 } }, 'INVALID_PDF_OPTIONS'],
    ['bad format', { html: '<p>x</p>', format: 'A6' }, 'INVALID_PDF_OPTIONS'],
    [
      'margins with no printable area',
      { html: '<p>x</p>', margins: { top: 6, bottom: 6 } },
      'INVALID_PDF_OPTIONS',
    ],
    ['variables not an object', { html: '<p>x</p>', variables: [1] }, 'INVALID_PDF_OPTIONS'],
    ['blank html', { html: '  ' }, 'INVALID_HTML_CONTENT'],
    ['html with NUL', { html: '<p>\u0000</p>' }, 'INVALID_HTML_CONTENT'],
    [
      'bad wait_until',
      { html: '<p>x</p>', page_load: { wait_until: 'networkidle1' } },
      'INVALID_PAGE_LOAD_OPTIONS',
    ],
    ['timeout_ms too low', { html: '<p>x</p>', page_load: { timeout_ms: 500 } }, 'INVALID_PAGE_LOAD_OPTIONS'],
    [
      'blank selector',
      { html: '<p>x</p>', page_load: { wait_for_selector: '' } },
      'INVALID_PAGE_LOAD_OPTIONS',
    ],
    [
      'invalid selector',
      { html: '<p>x</p>', page_load: { wait_for_selector: 'p >' } },
      'INVALID_PAGE_LOAD_OPTIONS',
    ],
    ['Jinja2 syntax error', { html: '<p>{% if %}</p>' }, 'INVALID_HTML_TEMPLATE'],
    ['undefined variable', { html: '<p>{{ total }}</p>', variables: { tot: 1 } }, 'INVALID_HTML_TEMPLATE'],
  ])('%s → %s', async (_, body, code) => {
    const res = await post(body, await local.sessionToken());
    expectError(res, 422, code);
  });

  it('names the field in details and the message', async () => {
    const res = await post(
      { html: '<p>x</p>', page_load: { timeout_ms: 130_000 } },
      await local.sessionToken(),
    );
    expectError(res, 422, 'INVALID_PAGE_LOAD_OPTIONS');
    // A sync render's range (an async one may ask up to the async render budget).
    const issue = 'must be at most 120000 for a sync render; render it async (async: true) to wait longer';
    expect(res.json.error.details).toEqual([{ field: 'page_load.timeout_ms', issue }]);
    expect(res.json.error.message).toBe(`page_load.timeout_ms ${issue}`);
  });

  it('names the undefined variable and its line', async () => {
    const res = await post({ html: '<h1>Hi</h1>\n<p>{{ customer_name }}</p>' }, await local.sessionToken());
    expectError(res, 422, 'INVALID_HTML_TEMPLATE');
    expect(res.json.error.message).toBe("Variable 'customer_name' is undefined (line 2)");
  });

  it('422 HTML_CONTENT_TOO_LARGE for inline html over 5 MiB and for templated output over 10 MiB', async () => {
    const token = await local.sessionToken();
    expectError(
      await post({ html: 'é'.repeat(2.5 * 1024 * 1024 + 1) }, token),
      422,
      'HTML_CONTENT_TOO_LARGE',
    );
    const res = await post(
      {
        html: '{% for i in range(n) %}{{ row }}{% endfor %}',
        variables: { n: 11 * 1024, row: 'x'.repeat(1024) },
      },
      token,
    );
    expectError(res, 422, 'HTML_CONTENT_TOO_LARGE');
    // Only executing the template finds this: the job fails, and its quota unit comes back.
    const jobId = res.json.error.job_id;
    expect(jobId).toMatch(/^job_/);
    const job = await local.api(`/v1/pdf/${jobId}`, { token });
    expect(job.json).toMatchObject({ status: 'failed', error: { code: 'HTML_CONTENT_TOO_LARGE' } });
    const { sub } = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8'));
    const usage = await DynamoDBDocumentClient.from(dynamoDbClient(local.stack)).send(
      new GetCommand({ TableName: local.stack.tableName, Key: usageKey(sub, monthOf(new Date())) }),
    );
    expect(usage.Item?.renders_used).toBe(0);
  });

  it('creates no job for a request that fails validation', async () => {
    const token = await local.sessionToken();
    await post({ html: '<p>{{ nope }}</p>' }, token);
    await post({ html: '' }, token);
    expect((await local.api('/v1/pdf', { token })).json).toEqual([]);
  });
});

describe('rendering failures', () => {
  it('504 PDF_RENDERING_TIMEOUT when a selector never appears; the failed job records it', async () => {
    const token = await local.sessionToken();
    const res = await post(
      { html: '<p>waiting</p>', page_load: { wait_for_selector: '#never', timeout_ms: 1000 } },
      token,
    );
    expectError(res, 504, 'PDF_RENDERING_TIMEOUT');
    const jobId = res.json.error.job_id;
    expect(jobId).toMatch(/^job_/);

    const job = await local.api(`/v1/pdf/${jobId}`, { token });
    expect(job.status).toBe(200);
    expect(job.json).toMatchObject({
      status: 'failed',
      download_url: null,
      file_size_bytes: null,
      page_count: null,
      error: { code: 'PDF_RENDERING_TIMEOUT' },
    });
  });

  it('504 PDF_RENDERING_TIMEOUT when the network never goes idle under networkidle0', async () => {
    const token = await local.sessionToken();
    const html = '<p>busy</p><script>setInterval(() => fetch("data:text/plain,x"), 100)</script>';
    const res = await post({ html, page_load: { wait_until: 'networkidle0', timeout_ms: 1500 } }, token);
    // A page that keeps the network busy never reaches networkidle0.
    expectError(res, 504, 'PDF_RENDERING_TIMEOUT');
  });
});

describe('Chromium failing mid-render', () => {
  /** Chromium's renderer processes started by this test process (its own stack's browser only). */
  const ownRendererPids = (): number[] => {
    const rows = execFileSync('ps', ['-eo', 'pid=,ppid=,args='], { encoding: 'utf8' })
      .split('\n')
      .map((line) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), args: m[3] ?? '' }));
    return descendantsOf(process.pid, rows)
      .filter((r) => r.args.includes('--type=renderer'))
      .map((r) => r.pid);
  };

  it('502 PDF_RENDERING_FAILED when the page’s renderer process dies, and the next render works', async () => {
    const token = await local.sessionToken();
    await post({ html: '<p>warm</p>' }, token); // the browser is up
    const before = new Set(ownRendererPids());
    const pending = post(
      { html: '<p>doomed</p>', page_load: { wait_for_selector: '#never', timeout_ms: 20_000 } },
      token,
    );
    // The doomed page's renderer is the one that was not there before the request.
    let killed: number[] = [];
    await vi.waitFor(
      () => {
        killed = ownRendererPids().filter((pid) => !before.has(pid));
        expect(killed.length).toBeGreaterThan(0);
      },
      { timeout: 10_000, interval: 50 },
    );
    // Let the page load and reach its wait for the selector, then take its renderer away.
    await new Promise((resolve) => setTimeout(resolve, 700));
    for (const pid of killed) process.kill(pid, 'SIGKILL');

    const res = await pending;
    expectError(res, 502, 'PDF_RENDERING_FAILED');
    expect(res.json.error.job_id).toMatch(/^job_/);
    expect(res.json.error.message).not.toMatch(/\/tmp|\/opt|Protocol error/);
    const job = await local.api(`/v1/pdf/${res.json.error.job_id}`, { token });
    expect(job.json).toMatchObject({ status: 'failed', error: { code: 'PDF_RENDERING_FAILED' } });

    const next = await post({ html: '<p>recovered</p>' }, token);
    expect(next.status).toBe(201);
  });
});
