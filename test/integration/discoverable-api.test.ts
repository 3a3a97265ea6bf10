/**
 * The API finds itself (issue 24, part 6): `/openapi.json` answers the OpenAPI document that
 * `npm run openapi` prints, without credentials, and `/`, the address `npm start` prints, leads
 * to the dashboard.
 */
import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../../functions/openapi.js';
import { useLocalStack } from '../helpers/local-stack.js';

const local = useLocalStack();

describe('discoverable API', () => {
  it('serves the OpenAPI document at /openapi.json, without credentials', async () => {
    const res = await local.api('/openapi.json');
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.json).toEqual(JSON.parse(JSON.stringify(openApiDocument())));
    expect(res.headers.get('x-request-id')).toBeTruthy();
  });

  it('answers another method on /openapi.json as before: 404 NOT_FOUND', async () => {
    const res = await local.api('/openapi.json', { method: 'POST', body: {} });
    expect(res.status).toBe(404);
    expect(res.json.error.code).toBe('NOT_FOUND');
  });

  it('redirects / to the dashboard', async () => {
    const res = await fetch(`${local.stack.baseUrl}/`, { redirect: 'manual' });
    expect(res.status).toBe(308);
    expect(res.headers.get('location')).toBe('/dashboard/');
  });
});
