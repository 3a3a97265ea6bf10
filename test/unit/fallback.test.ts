/**
 * The fallback function's own answers, without AWS: `/openapi.json`, and `GET /` leading to the
 * dashboard when the deployment has one (DASHBOARD_URL), else the API's 404 as for any unknown path.
 */
import type { Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { readFallbackConfig } from '../../functions/core/config.js';
import type { Event } from '../../functions/core/http.js';
import { createHandler } from '../../functions/fallback/index.js';

const event = (method: string, path: string) =>
  ({ rawPath: path, requestContext: { requestId: 'r-1', http: { method, path } } }) as unknown as Event;
const context = { awsRequestId: 'r-1' } as Context;
const DASHBOARD = 'https://d111111abcdef8.cloudfront.net/';

describe('the fallback', () => {
  it('redirects GET and HEAD / to the dashboard when the deployment has one', async () => {
    const handler = createHandler(readFallbackConfig({ DASHBOARD_URL: DASHBOARD }));
    for (const method of ['GET', 'HEAD']) {
      const res = await handler(event(method, '/'), context);
      expect(res.statusCode).toBe(302);
      expect(res.headers?.Location).toBe(DASHBOARD);
    }
    expect((await handler(event('POST', '/'), context)).statusCode).toBe(404);
    expect((await handler(event('GET', '/openapi.json'), context)).statusCode).toBe(200);
  });

  it('answers / with 404 NOT_FOUND without one, and refuses a DASHBOARD_URL that is not a URL', async () => {
    const res = await createHandler(readFallbackConfig({}))(event('GET', '/'), context);
    expect(res.statusCode).toBe(404);
    expect(JSON.parse(res.body as string).error.code).toBe('NOT_FOUND');
    expect(() => readFallbackConfig({ DASHBOARD_URL: 'dashboard' })).toThrow(/DASHBOARD_URL/);
  });
});
