import { execFile } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { request as httpRequest, type OutgoingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { DescribeTableCommand, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, HeadBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { CognitoJwtVerifier } from 'aws-jwt-verify';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Route } from '../../functions/routes.js';
import {
  closeServer,
  createLocalHttpServer,
  type LambdaHandler,
  listen,
  MAX_REQUEST_BODY_BYTES,
} from '../../lib/local/http-server.js';
import { type Jwks, LOCAL_CLIENT_ID, LOCAL_ISSUER, LOCAL_USER_POOL_ID } from '../../lib/local/issuer.js';
import { currentBuild } from '../../lib/local/start-bundle.mjs';
import {
  createTempDataDir,
  dynamoDbClient,
  s3Client,
  startTestStack,
  type TestStack,
} from '../helpers/local-stack.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const JWT_SHAPE = /^[\w-]+\.[\w-]+\.[\w-]+$/;

const verifierFor = async (jwksFile: string) => {
  const verifier = CognitoJwtVerifier.create({
    userPoolId: LOCAL_USER_POOL_ID,
    clientId: LOCAL_CLIENT_ID,
    tokenUse: 'id',
  });
  verifier.cacheJwks(JSON.parse(await readFile(jwksFile, 'utf8')) as Jwks as never);
  return verifier;
};

/** `npm run --silent token -- …`: bin/token.mjs, which runs bin/token.ts from its bundle. */
const runTokenCommand = (args: string[], dataDir: string) =>
  promisify(execFile)(process.execPath, ['bin/token.mjs', ...args], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: dataDir },
  }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({
      code: e.code,
      stdout: e.stdout,
      stderr: e.stderr,
    }),
  );

describe('local stack', () => {
  let dataDir: string;
  let local: TestStack;

  beforeAll(async () => {
    dataDir = await createTempDataDir();
    local = await startTestStack({ dataDir });
    // The token command's bundle, built now if a source changed since the last build: the build
    // says so on stderr, which the tests below expect empty (a user's first call says it too).
    await runTokenCommand(['--sub', 'warm-up', '--email', 'warm-up@example.com'], dataDir);
  });

  afterAll(async () => {
    await local?.stack.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('creates the table from functions/table.ts and the bucket', async () => {
    const { stack } = local;
    expect(stack.dataDir).toBe(dataDir);
    expect(stack.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const ddb = dynamoDbClient(stack);
    const { Table } = await ddb.send(new DescribeTableCommand({ TableName: stack.tableName }));
    ddb.destroy();
    expect(Table?.TableStatus).toBe('ACTIVE');
    expect(Table?.KeySchema).toEqual([
      { AttributeName: 'PK', KeyType: 'HASH' },
      { AttributeName: 'SK', KeyType: 'RANGE' },
    ]);
    expect(Table?.BillingModeSummary?.BillingMode).toBe('PAY_PER_REQUEST');
    expect(
      Table?.GlobalSecondaryIndexes?.map((i) => [i.IndexName, i.KeySchema?.map((k) => k.AttributeName)]),
    ).toEqual(
      expect.arrayContaining([
        ['GSI1', ['GSI1PK', 'GSI1SK']],
        ['GSI2', ['GSI2PK', 'GSI2SK']],
      ]),
    );
    const s3 = s3Client(stack);
    await expect(s3.send(new HeadBucketCommand({ Bucket: stack.bucketName }))).resolves.toBeDefined();
    s3.destroy();
  });

  it('hands the handlers their configuration, leaving process.env alone', () => {
    const { stack } = local;
    expect(stack.handlerEnv).toMatchObject({
      TABLE_NAME: stack.tableName,
      BUCKET_NAME: stack.bucketName,
      DYNAMODB_ENDPOINT: stack.dynamoDbEndpoint,
      S3_ENDPOINT: stack.s3Endpoint,
      COGNITO_USER_POOL_ID: LOCAL_USER_POOL_ID,
      // The token command's client and the dashboard's local sign-in (lib/local/dashboard.ts).
      COGNITO_CLIENT_ID: `${LOCAL_CLIENT_ID},local-dashboard`,
      LOCAL_JWKS_FILE: stack.jwksFile,
    });
    for (const name of ['TABLE_NAME', 'BUCKET_NAME', 'DYNAMODB_ENDPOINT', 'S3_ENDPOINT', 'LOCAL_JWKS_FILE']) {
      expect(process.env[name]).toBeUndefined();
    }
    expect(stack.handlerEnv.RENDERER_FUNCTION_NAME).toBeUndefined();
  });

  it('issues Cognito-style ID tokens that aws-jwt-verify accepts with the written JWKS', async () => {
    const verifier = await verifierFor(local.stack.jwksFile);
    const token = await local.stack.issueToken({ sub: 'acct-1', email: 'a@example.com' });
    const payload = await verifier.verify(token);
    expect(payload).toMatchObject({
      sub: 'acct-1',
      email: 'a@example.com',
      email_verified: true,
      token_use: 'id',
      iss: LOCAL_ISSUER,
      aud: LOCAL_CLIENT_ID,
    });
    expect(payload.exp - payload.iat).toBe(3600);
    const jwks = JSON.parse(await readFile(local.stack.jwksFile, 'utf8')) as Jwks;
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'RS256', kid: jwks.keys[0]?.kid });
  });

  it('issues tokens that the verifier refuses when expired or not an ID token', async () => {
    const verifier = await verifierFor(local.stack.jwksFile);
    const expired = await local.stack.issueToken({ sub: 'acct-1', email: 'a@example.com', ttlSeconds: -60 });
    await expect(verifier.verify(expired)).rejects.toThrow(/expired/i);
    const access = await local.stack.issueToken({
      sub: 'acct-1',
      email: 'a@example.com',
      claims: { token_use: 'access' },
    });
    await expect(verifier.verify(access)).rejects.toThrow(/token use/i);
  });

  it('has the API accept its session tokens and refuse others', async () => {
    const token = await local.sessionToken();
    const ok = await local.api('/v1/pdf', { token });
    expect(ok.status).toBe(200);
    expect(ok.json).toEqual([]);
    expect(ok.headers.get('x-request-id')).toBe(ok.headers.get('apigw-requestid'));
    const expired = await local.sessionToken(undefined, { ttlSeconds: -60 });
    expect((await local.api('/v1/pdf', { token: expired })).status).toBe(401);
  });

  it('npm run token (bin/token.mjs) prints only a token, which verifies', async () => {
    const { code, stdout, stderr } = await runTokenCommand(
      ['--sub', 'acct-2', '--email', 'b@example.com', '--ttl', '120'],
      dataDir,
    );
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout.endsWith('\n')).toBe(true);
    expect(stdout.trim()).toMatch(JWT_SHAPE);
    const payload = await (await verifierFor(local.stack.jwksFile)).verify(stdout.trim());
    expect(payload).toMatchObject({ sub: 'acct-2', email: 'b@example.com' });
    expect(payload.exp - payload.iat).toBe(120);
  });

  it('npm run token refuses bad arguments with exit code 2 and nothing on stdout', async () => {
    const missing = await runTokenCommand(['--email', 'b@example.com'], dataDir);
    expect(missing).toMatchObject({ code: 2, stdout: '' });
    expect(missing.stderr).toMatch(/--sub is required/);
    const badTtl = await runTokenCommand(
      ['--sub', 'x', '--email', 'x@example.com', '--ttl', 'soon'],
      dataDir,
    );
    expect(badTtl).toMatchObject({ code: 2, stdout: '' });
    expect(badTtl.stderr).toMatch(/--ttl/);
  });

  it('npm run token creates the key pair when the server never ran', async () => {
    const fresh = await createTempDataDir();
    try {
      const { code, stdout, stderr } = await runTokenCommand(
        ['--sub', 'x', '--email', 'x@example.com'],
        fresh,
      );
      expect(code).toBe(0);
      // Not silently: a server on another DATA_DIR would refuse this token.
      expect(stderr).toMatch(/no local stack is running on DATA_DIR/);
      const payload = await (await verifierFor(`${fresh}/issuer/jwks.json`)).verify(stdout.trim());
      expect(payload.sub).toBe('x');
    } finally {
      await rm(fresh, { recursive: true, force: true });
    }
  });

  it('npm start (bin/start.mjs) fails fast, with a clear message, when PORT or DATA_DIR is taken', async () => {
    const start = (env: Record<string, string>) =>
      promisify(execFile)(process.execPath, ['bin/start.mjs'], {
        cwd: ROOT,
        env: { ...process.env, ...env },
        timeout: 30_000,
      }).then(
        () => ({ code: 0, stderr: '' }),
        (e: { code: number; stderr: string }) => ({ code: e.code, stderr: e.stderr }),
      );
    const port = new URL(local.stack.baseUrl).port;
    const other = await createTempDataDir();
    const another = await createTempDataDir();
    // npm start's bundle is built once, first (whichever process gets there first builds it, as the
    // README's first `npm start` does): the three then time their start, not three builds at once.
    await currentBuild();
    try {
      // Three processes that each stop at start-up, side by side (each on a DATA_DIR of its own).
      const [portTaken, dirTaken, badPort] = await Promise.all([
        start({ PORT: port, DATA_DIR: other }),
        start({ PORT: '0', DATA_DIR: dataDir }),
        start({ PORT: 'http', DATA_DIR: another }),
      ]);
      expect(portTaken.code).toBe(1);
      expect(portTaken.stderr).toContain(`port ${port} on 127.0.0.1 is already in use`);
      expect(dirTaken.code).toBe(1);
      expect(dirTaken.stderr).toContain(
        `DATA_DIR ${dataDir} is in use by another local stack (pid ${process.pid})`,
      );
      expect(badPort.code).toBe(1);
      expect(badPort.stderr).toContain('PORT must be an integer');
    } finally {
      await rm(other, { recursive: true, force: true });
      await rm(another, { recursive: true, force: true });
    }
  }, 120_000);

  it('answers an unknown path with 404 NOT_FOUND in the contract error body', async () => {
    const res = await local.api('/v1/nothing-here');
    expect(res.status).toBe(404);
    expect(res.json).toEqual({
      error: { code: 'NOT_FOUND', message: expect.any(String), request_id: res.headers.get('x-request-id') },
    });
  });

  it('answers a known path with another method with 405 and Allow', async () => {
    const res = await local.api('/v1/pdf', { method: 'DELETE' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')?.split(/,\s*/).sort()).toEqual(['GET', 'POST']);
    expect(res.json.error).toMatchObject({
      code: 'METHOD_NOT_ALLOWED',
      request_id: res.headers.get('x-request-id'),
    });
  });

  it('refuses a body over 10 MB with 413 REQUEST_TOO_LARGE, like API Gateway', async () => {
    const res = await local.api('/v1/pdf', {
      method: 'POST',
      body: 'x'.repeat(MAX_REQUEST_BODY_BYTES + 1),
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(413);
    const requestId = res.headers.get('x-request-id');
    expect(requestId).toBeTruthy();
    expect(res.json).toEqual({
      error: { code: 'REQUEST_TOO_LARGE', message: expect.any(String), request_id: requestId },
    });
  });

  // Last in this block: it replaces the stack.
  it('keeps data and the signing key across a restart on the same DATA_DIR', async () => {
    const before = local.stack;
    const oldToken = await before.issueToken({ sub: 'acct-3', email: 'c@example.com' });
    const jwksBefore = await readFile(before.jwksFile, 'utf8');
    const ddb = dynamoDbClient(before);
    await ddb.send(
      new PutItemCommand({
        TableName: before.tableName,
        Item: { PK: { S: 'TEST#1' }, SK: { S: 'A' }, n: { N: '7' } },
      }),
    );
    ddb.destroy();
    const s3 = s3Client(before);
    await s3.send(
      new PutObjectCommand({ Bucket: before.bucketName, Key: 'restart/kept.txt', Body: 'still here' }),
    );
    s3.destroy();

    await before.close();
    await before.close(); // closing twice is harmless
    local = await startTestStack({ dataDir });
    const after = local.stack;

    expect(await readFile(after.jwksFile, 'utf8')).toBe(jwksBefore);
    await expect((await verifierFor(after.jwksFile)).verify(oldToken)).resolves.toMatchObject({
      sub: 'acct-3',
    });
    const ddb2 = dynamoDbClient(after);
    const { Item } = await ddb2.send(
      new GetItemCommand({ TableName: after.tableName, Key: { PK: { S: 'TEST#1' }, SK: { S: 'A' } } }),
    );
    ddb2.destroy();
    expect(Item?.n).toEqual({ N: '7' });
    const s3b = s3Client(after);
    const object = await s3b.send(
      new GetObjectCommand({ Bucket: after.bucketName, Key: 'restart/kept.txt' }),
    );
    expect(await object.Body?.transformToString()).toBe('still here');
    s3b.destroy();
    // Handlers loaded before the restart keep working (the emulators came back on their ports),
    // and they still accept a token issued before it.
    expect((await local.api('/v1/nothing-here')).status).toBe(404);
    expect((await local.api('/v1/pdf', { token: oldToken })).status).toBe(200);
  });
});

// ---------------------------------------------------------------------------------------------
// The local API Gateway on its own, with handlers that show what they were given.

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

const rawRequest = (
  port: number,
  {
    method = 'GET',
    path = '/',
    headers = {},
    body,
  }: { method?: string; path?: string; headers?: OutgoingHttpHeaders; body?: Buffer | string },
): Promise<RawResponse> =>
  new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });

const TEST_ROUTES: Route[] = [
  { method: 'GET', path: '/v1/templates/{id}', resource: 'echo', credentials: ['session'] },
  { method: 'GET', path: '/v1/templates/public', resource: 'echo', credentials: ['session'] },
  { method: 'POST', path: '/v1/things/{id}/parts/{part}', resource: 'echo', credentials: ['session'] },
  { method: 'GET', path: '/files/{path+}', resource: 'echo', credentials: ['session'] },
  { method: 'GET', path: '/result/{kind}', resource: 'result', credentials: ['session'] },
  { method: 'GET', path: '/crash', resource: 'crash', credentials: ['session'] },
];

const echo: LambdaHandler = async (event, context) => ({
  statusCode: 200,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ event, context: { ...context, remaining: context.getRemainingTimeInMillis() } }),
});

const results: Record<string, unknown> = {
  cookies: { statusCode: 201, headers: { 'x-n': 3 }, cookies: ['a=1; Path=/', 'b=2'], body: 'made' },
  binary: {
    statusCode: 200,
    headers: { 'content-type': 'application/pdf' },
    body: 'JVBERi0=',
    isBase64Encoded: true,
  },
  bare: { hello: 'world' },
  badStatus: { statusCode: 'two hundred' },
};

const fakeHandlers: Record<string, LambdaHandler> = {
  echo,
  fallback: echo,
  result: async (event) => results[event.pathParameters?.kind ?? ''],
  crash: async () => {
    throw new Error('secret internals at /var/task/index.js');
  },
};

describe('local API Gateway', () => {
  let server: Server;
  let port: number;
  const crashes: unknown[] = [];

  beforeAll(async () => {
    server = createLocalHttpServer({
      routes: TEST_ROUTES,
      quiet: true,
      logError: (_message, error) => crashes.push(error),
      loadHandler: async (resource) => {
        const h = fakeHandlers[resource];
        if (!h) throw new Error(`no handler ${resource}`);
        return h;
      },
    });
    port = ((await listen(server, 0, '127.0.0.1')) as AddressInfo).port;
  });

  afterAll(() => closeServer(server));

  const eventOf = (res: RawResponse): APIGatewayProxyEventV2 & { context?: unknown } =>
    (JSON.parse(res.body.toString()) as { event: APIGatewayProxyEventV2 }).event;

  it('builds a payload v2 event: route key, decoded path parameters, joined headers and query, cookies', async () => {
    const res = await rawRequest(port, {
      method: 'POST',
      path: '/v1/things/a%20b/parts/c%2Fd?x=1&x=2&y=%20z&empty=',
      headers: {
        'Content-Type': 'application/json',
        'X-Dup': ['one', 'two'],
        Cookie: 'a=1; b=2',
        'User-Agent': 'tests/1',
      },
      body: '{"ok":true}',
    });
    expect(res.status).toBe(200);
    const event = eventOf(res);
    expect(event).toMatchObject({
      version: '2.0',
      routeKey: 'POST /v1/things/{id}/parts/{part}',
      rawPath: '/v1/things/a%20b/parts/c%2Fd',
      rawQueryString: 'x=1&x=2&y=%20z&empty=',
      pathParameters: { id: 'a b', part: 'c/d' },
      queryStringParameters: { x: '1,2', y: ' z', empty: '' },
      cookies: ['a=1', 'b=2'],
      body: '{"ok":true}',
      isBase64Encoded: false,
      requestContext: {
        accountId: expect.any(String),
        apiId: expect.any(String),
        domainName: '127.0.0.1',
        http: {
          method: 'POST',
          path: '/v1/things/a%20b/parts/c%2Fd',
          protocol: 'HTTP/1.1',
          sourceIp: '127.0.0.1',
          userAgent: 'tests/1',
        },
        routeKey: 'POST /v1/things/{id}/parts/{part}',
        stage: '$default',
        time: expect.stringMatching(/^\d\d\/\w{3}\/\d{4}:\d\d:\d\d:\d\d \+0000$/),
        timeEpoch: expect.any(Number),
      },
    });
    expect(event.headers['x-dup']).toBe('one,two');
    expect(event.headers['content-type']).toBe('application/json');
    expect(event.headers.cookie).toBeUndefined();
    expect(Object.keys(event.headers).every((k) => k === k.toLowerCase())).toBe(true);
    expect(res.headers['apigw-requestid']).toBe(event.requestContext.requestId);
  });

  it('gives each request its own request id and Lambda context', async () => {
    const a = JSON.parse((await rawRequest(port, { path: '/v1/templates/1' })).body.toString());
    const b = JSON.parse((await rawRequest(port, { path: '/v1/templates/1' })).body.toString());
    expect(a.event.requestContext.requestId).not.toBe(b.event.requestContext.requestId);
    expect(a.context.awsRequestId).not.toBe(b.context.awsRequestId);
    expect(a.context).toMatchObject({
      functionName: expect.stringContaining('echo'),
      functionVersion: '$LATEST',
    });
    expect(a.context.remaining).toBeGreaterThan(0);
    expect(a.event.body).toBeUndefined();
    expect(a.event.queryStringParameters).toBeUndefined();
    expect(a.event.cookies).toBeUndefined();
  });

  it('prefers static segments over parameters, and matches greedy parameters', async () => {
    expect(eventOf(await rawRequest(port, { path: '/v1/templates/public' })).routeKey).toBe(
      'GET /v1/templates/public',
    );
    expect(eventOf(await rawRequest(port, { path: '/v1/templates/tpl_1' })).pathParameters).toEqual({
      id: 'tpl_1',
    });
    expect(eventOf(await rawRequest(port, { path: '/files/a/b/c.txt' })).pathParameters).toEqual({
      path: 'a/b/c.txt',
    });
  });

  it('sends requests that match no route to $default', async () => {
    for (const [method, path] of [
      ['GET', '/nowhere'],
      ['DELETE', '/v1/templates/1'],
      ['GET', '/v1/templates/1/extra'],
      ['GET', '/v1/templates/'],
    ] as const) {
      const event = eventOf(await rawRequest(port, { method, path }));
      expect(event.routeKey).toBe('$default');
      expect(event.requestContext.routeKey).toBe('$default');
      expect(event.pathParameters).toBeUndefined();
    }
  });

  it('base64-encodes bodies that are not text', async () => {
    const bytes = Buffer.from([0, 1, 2, 250, 251]);
    const binary = eventOf(
      await rawRequest(port, {
        method: 'POST',
        path: '/v1/things/1/parts/2',
        headers: { 'content-type': 'application/octet-stream' },
        body: bytes,
      }),
    );
    expect(binary.isBase64Encoded).toBe(true);
    expect(Buffer.from(binary.body ?? '', 'base64')).toEqual(bytes);
    const untyped = eventOf(
      await rawRequest(port, { method: 'POST', path: '/v1/things/1/parts/2', body: '{}' }),
    );
    expect(untyped).toMatchObject({ isBase64Encoded: true, body: Buffer.from('{}').toString('base64') });
    const text = eventOf(
      await rawRequest(port, {
        method: 'POST',
        path: '/v1/things/1/parts/2',
        headers: { 'content-type': 'text/html; charset=utf-8' },
        body: '<p>é</p>',
      }),
    );
    expect(text).toMatchObject({ isBase64Encoded: false, body: '<p>é</p>' });
  });

  it('writes structured results: status, headers, cookies as Set-Cookie, base64 bodies', async () => {
    const withCookies = await rawRequest(port, { path: '/result/cookies' });
    expect(withCookies.status).toBe(201);
    expect(withCookies.headers['x-n']).toBe('3');
    expect(withCookies.headers['set-cookie']).toEqual(['a=1; Path=/', 'b=2']);
    expect(withCookies.body.toString()).toBe('made');
    const binary = await rawRequest(port, { path: '/result/binary' });
    expect(binary.headers['content-type']).toBe('application/pdf');
    expect(binary.body.toString()).toBe('%PDF-');
  });

  it('reads a result without statusCode as a 200 JSON body, as API Gateway does', async () => {
    const res = await rawRequest(port, { path: '/result/bare' });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(JSON.parse(res.body.toString())).toEqual({ hello: 'world' });
  });

  it('turns a crashing handler into 500 INTERNAL_ERROR without its details', async () => {
    crashes.length = 0;
    const res = await rawRequest(port, { path: '/crash' });
    expect(res.status).toBe(500);
    const body = JSON.parse(res.body.toString());
    expect(body).toEqual({
      error: { code: 'INTERNAL_ERROR', message: expect.any(String), request_id: res.headers['x-request-id'] },
    });
    expect(res.body.toString()).not.toMatch(/secret|var\/task|at /);
    expect(crashes).toHaveLength(1);
    const malformed = await rawRequest(port, { path: '/result/badStatus' });
    expect(malformed.status).toBe(500);
  });

  it('refuses an announced oversize body before it is sent (Expect: 100-continue)', async () => {
    const res = await new Promise<{ status: number; continued: boolean; body: string }>((resolve, reject) => {
      let continued = false;
      const req = httpRequest({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/v1/things/1/parts/2',
        headers: {
          expect: '100-continue',
          'content-length': MAX_REQUEST_BODY_BYTES + 1,
          'content-type': 'text/plain',
        },
      });
      req.on('continue', () => {
        continued = true;
        req.end(Buffer.alloc(MAX_REQUEST_BODY_BYTES + 1));
      });
      req.on('response', (r) => {
        let body = '';
        r.on('data', (c: Buffer) => {
          body += c.toString();
        });
        r.on('end', () => {
          req.destroy();
          resolve({ status: r.statusCode ?? 0, continued, body });
        });
      });
      req.on('error', reject);
      req.flushHeaders();
    });
    expect(res).toMatchObject({ status: 413, continued: false });
    expect(JSON.parse(res.body).error.code).toBe('REQUEST_TOO_LARGE');
  });

  it('keeps serving after a client goes away in the middle of its body', async () => {
    await new Promise<void>((resolve) => {
      const req = httpRequest({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/v1/things/1/parts/2',
        headers: { 'content-length': 1000, 'content-type': 'text/plain' },
      });
      req.on('error', () => resolve());
      req.write('only part of it', () => {
        req.destroy();
        resolve();
      });
    });
    expect((await rawRequest(port, { path: '/v1/templates/1' })).status).toBe(200);
  });

  it('passes a 5 MB body through, and refuses one whose event is over the 6 MB Lambda payload quota', async () => {
    const send = (bytes: number) =>
      rawRequest(port, {
        method: 'POST',
        path: '/v1/things/1/parts/2',
        headers: { 'content-type': 'text/plain' },
        body: Buffer.alloc(bytes, 'a'),
      });
    expect((await send(5 * 1024 * 1024)).status).toBe(200);
    const over = await send(7 * 1024 * 1024);
    expect(over.status).toBe(413);
    expect(JSON.parse(over.body.toString()).error.code).toBe('REQUEST_TOO_LARGE');
  });
});
