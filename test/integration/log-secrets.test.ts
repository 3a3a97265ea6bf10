/**
 * Nothing secret or private reaches a log line: not a session token, an API key or any
 * Authorization header, not HTML, not a variable's value. Every line the service writes while
 * it answers a broad mix of requests (successes, auth failures, template errors, render
 * failures), at DEBUG, is captured and searched.
 */
// First: everything down to DEBUG is written, from the modules' loading on.
import '../helpers/debug-logging.js';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeyDigest } from '../../functions/adapters/secrets-manager/api-key-digest.js';
import { apiKeyPrefix, generateApiKey } from '../../functions/domain/accounts/api-key-format.js';
import { dynamoDbClient, useLocalStack } from '../helpers/local-stack.js';
import { type CapturedOutput, captureOutput } from '../helpers/process-output.js';

// In this process: its handlers log at the level debug-logging.ts set here, to this process's output.
const local = useLocalStack({
  inProcess: true,
  env: { PLANS: JSON.stringify({ free: { monthlyRenders: 1000, rendersPerMinute: 1000 } }) },
  // A name public at the endpoint's creation (a host that does not resolve is refused then) and
  // gone by its attempts: they are refused before connecting, and signed all the same.
  webhookHosts: { 'hooks.example.com': [['93.184.216.34'], []] },
});

const MARK = {
  html: 'HTML-MARKER-7c1e',
  value: 'VARIABLE-VALUE-MARKER-93ab',
  query: 'QUERY-MARKER-51d0',
  garbage: 'GARBAGE-TOKEN-MARKER-aa42',
  ownerPassword: 'OWNER-PASSWORD-MARKER-5e21',
  userPassword: 'USER-PASSWORD-MARKER-0c7d',
};

let output: CapturedOutput;
beforeAll(() => {
  output = captureOutput();
});
afterAll(() => output.stop());

describe('log lines', () => {
  it('never carry tokens, keys, Authorization headers, HTML or variable values', async () => {
    const token = await local.sessionToken();
    const expired = await local.sessionToken(undefined, { ttlSeconds: -60 });
    const key = generateApiKey();
    const db = DynamoDBDocumentClient.from(dynamoDbClient(local.stack));
    await db.send(
      new PutCommand({
        TableName: local.stack.tableName,
        Item: {
          PK: `APIKEY#${apiKeyDigest(local.stack.handlerEnv.API_KEY_SECRET as string, key)}`,
          SK: 'APIKEY',
          type: 'api_key',
          id: 'key_log_secrets',
          account_id: 'acct-log-secrets',
          name: 'logs',
          prefix: apiKeyPrefix(key),
          created_at: new Date().toISOString(),
          last_used_at: null,
          revoked_at: null,
        },
      }),
    );
    const unknownKey = generateApiKey();
    const protection = { owner_password: MARK.ownerPassword, user_password: MARK.userPassword };
    const post = (credential: string | undefined, body: unknown) =>
      local.api(`/v1/pdf?note=${MARK.query}`, { method: 'POST', token: credential, body });

    const answers = [
      await post(token, { html: `<p>${MARK.html} {{ v }}</p>`, variables: { v: MARK.value } }),
      await post(key, { html: `<p>${MARK.html}</p>`, variables: { v: MARK.value } }),
      // Template errors: by parsing, and by executing (the value is in the failing expression).
      await post(token, { html: `<p>${MARK.html}{% if %}</p>` }),
      await post(token, { html: `<p>${MARK.html}{{ v.missing }}</p>`, variables: { v: { k: MARK.value } } }),
      await post(token, { html: `<p>${MARK.html}{{ 1 / 0 }}</p>`, variables: { v: MARK.value } }),
      // A page that fails to load what it waits for.
      await post(token, {
        html: `<p>${MARK.html}</p>`,
        variables: { v: MARK.value },
        page_load: { wait_for_selector: '#never', timeout_ms: 1000 },
      }),
      // Credentials refused in every way.
      await post(expired, { html: `<p>${MARK.html}</p>` }),
      await post(`${MARK.garbage}.${MARK.garbage}.${MARK.garbage}`, { html: `<p>${MARK.html}</p>` }),
      await post(unknownKey, { html: `<p>${MARK.html}</p>` }),
      // Its last character changed (a key that ends in x kept its x before: 1 run in 62 got a 201).
      await post(`${key.slice(0, -1)}${key.endsWith('x') ? 'y' : 'x'}`, { html: `<p>${MARK.html}</p>` }),
      await local.api('/v1/pdf', { method: 'POST', headers: { authorization: `Basic ${MARK.garbage}` } }),
      // Bad bodies and an unknown route.
      await post(token, { html: `<p>${MARK.html}</p>`, variables: MARK.value }),
      await local.api(`/v1/${MARK.query}`, { token }),
      // Passwords (issue 34): a protected render, sync and async, and one refused as weak.
      await post(token, { html: '<p>x</p>', protection }),
      await post(token, { html: '<p>x</p>', protection, async: true }),
      await post(token, { html: '<p>x</p>', protection: { owner_password: MARK.userPassword.slice(0, 8) } }),
    ];
    expect(answers.map((a) => a.status)).toEqual([
      201, 201, 422, 422, 422, 504, 401, 401, 401, 401, 401, 422, 404, 201, 202, 422,
    ]);
    const asyncJob = answers.at(-2)?.json.id as string;
    for (
      let tries = 0;
      (await local.api(`/v1/pdf/${asyncJob}`, { token })).json.status !== 'completed';
      tries++
    ) {
      if (tries > 300) throw new Error('the protected async render never completed');
      await new Promise((r) => setTimeout(r, 100));
    }

    // A webhook endpoint's signing secret: created, then used to sign a test event's attempt.
    const hook = await local.api('/v1/webhooks', {
      method: 'POST',
      token,
      body: { url: 'https://hooks.example.com/pdf' },
    });
    expect(hook.status, hook.text).toBe(201);
    const webhookSecret: string = hook.json.secret;
    const test = await local.api(`/v1/webhooks/${hook.json.id}/test`, { method: 'POST', token });
    expect(test.status, test.text).toBe(201);
    for (let tries = 0; ; tries++) {
      const deliveries = await local.api(`/v1/webhooks/${hook.json.id}/deliveries`, { token });
      if (deliveries.json[0]?.attempts.length > 0) break;
      if (tries > 100) throw new Error('the test event was never attempted');
      await new Promise((r) => setTimeout(r, 100));
    }

    const logs = output.chunks.join('');
    // The lines are there (so this test could fail): one per answered request, with its code.
    expect(logs).toContain('"routeKey":"POST /v1/pdf"');
    expect(logs).toContain('"errorCode":"INVALID_SESSION_TOKEN"');
    expect(logs).toContain('"errorCode":"INVALID_HTML_TEMPLATE"');
    expect(logs).toContain('"jobId":"job_');
    const secrets = { token, expired, key, unknownKey, webhookSecret: webhookSecret.slice(6), ...MARK };
    for (const [name, secret] of Object.entries(secrets)) {
      expect(logs.includes(secret), `${name} appears in the logs`).toBe(false);
    }
    // No piece of a JWT or key either: their signatures and random parts.
    for (const part of [token.split('.')[2] ?? '', key.slice(9, 30)]) expect(logs.includes(part)).toBe(false);
  });
});
