/**
 * CORS as API Gateway answers it with `corsPreflight` (here the local gateway, from the same
 * policy, lib/cors.ts): only configured origins may call the API from a browser.
 */
import { describe, expect, it } from 'vitest';
import { CorsOriginError, corsPolicy } from '../../lib/cors.js';
import { useLocalStack } from '../helpers/local-stack.js';

const DASHBOARD = 'https://dashboard.example.com';
const local = useLocalStack({ corsAllowedOrigins: [DASHBOARD, 'http://localhost:5173'] });

const preflight = (origin: string, method = 'POST') =>
  local.api('/v1/pdf', {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': method,
      'access-control-request-headers': 'authorization,content-type,idempotency-key',
    },
  });

describe('CORS', () => {
  it('answers a preflight from a configured origin with the methods and headers the API takes', async () => {
    const res = await preflight(DASHBOARD);
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(DASHBOARD);
    expect(res.headers.get('access-control-allow-methods')?.split(',')).toEqual(
      expect.arrayContaining(['GET', 'POST']),
    );
    expect(res.headers.get('access-control-allow-headers')?.split(',')).toEqual(
      expect.arrayContaining(['authorization', 'content-type', 'idempotency-key']),
    );
    expect(Number(res.headers.get('access-control-max-age'))).toBeGreaterThan(0);
  });

  it("serves /openapi.json with the API's CORS", async () => {
    const res = await local.api('/openapi.json', { headers: { origin: DASHBOARD } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe(DASHBOARD);
    const other = await local.api('/openapi.json', { headers: { origin: 'https://evil.example.com' } });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('gives another origin no CORS headers, so its browser refuses the call', async () => {
    for (const origin of ['https://evil.example.com', 'https://dashboard.example.com.evil.com', 'null']) {
      const res = await preflight(origin);
      expect(res.headers.get('access-control-allow-origin'), origin).toBeNull();
      const get = await local.api('/v1/pdf', { headers: { origin } });
      expect(get.headers.get('access-control-allow-origin'), origin).toBeNull();
    }
  });

  it('lets a configured origin read the answer and its headers, errors included', async () => {
    const token = await local.sessionToken();
    const ok = await local.api('/v1/pdf', {
      method: 'POST',
      token,
      body: { html: '<p>cors</p>' },
      headers: { origin: DASHBOARD },
    });
    expect(ok.status).toBe(201);
    expect(ok.headers.get('access-control-allow-origin')).toBe(DASHBOARD);
    expect(ok.headers.get('access-control-expose-headers')?.split(',')).toEqual(
      expect.arrayContaining(['x-request-id', 'ratelimit-remaining', 'retry-after', 'idempotent-replayed']),
    );
    expect(ok.headers.get('vary')?.toLowerCase()).toContain('origin');
    const unauthenticated = await local.api('/v1/pdf', { headers: { origin: 'http://localhost:5173' } });
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
  });

  it('accepts only exact origins in the policy: no wildcard, path or plain http off localhost', () => {
    for (const origin of [
      '*',
      'https://a.example.com/',
      'https://a.example.com/app',
      'http://a.example.com',
      'a.example.com',
    ]) {
      expect(() => corsPolicy([origin]), origin).toThrow(CorsOriginError);
    }
    expect(corsPolicy([])).toBeUndefined();
    expect(corsPolicy(['https://a.example.com:8443'])?.allowOrigins).toEqual(['https://a.example.com:8443']);
  });
});
