/**
 * The API's CORS policy, one definition for API Gateway (lib/service-api.ts, `corsPreflight`) and
 * for the local gateway (lib/local/http-server.ts): browsers may call the API only from the
 * configured origins (the dashboard's), with the credential header, and may read the headers the
 * API answers with. Off when no origin is configured.
 */
import { routes } from '../functions/routes.js';

export interface CorsPolicy {
  readonly allowOrigins: readonly string[];
  readonly allowMethods: readonly string[];
  readonly allowHeaders: readonly string[];
  readonly exposeHeaders: readonly string[];
  readonly maxAgeSeconds: number;
}

export class CorsOriginError extends Error {
  constructor(origin: string) {
    super(
      `CORS origin "${origin}" must be a scheme and host (and port) such as https://dashboard.example.com, without a path or "*"`,
    );
    this.name = 'CorsOriginError';
  }
}

/** An origin as browsers send it: `https://host[:port]`; http only for localhost. */
const checkOrigin = (origin: string): string => {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    throw new CorsOriginError(origin);
  }
  const local = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  if (url.origin !== origin || (url.protocol !== 'https:' && !(url.protocol === 'http:' && local))) {
    throw new CorsOriginError(origin);
  }
  return origin;
};

/**
 * @param deployTimeOrigins origins known only at deploy time (CDK tokens: the dashboard
 * distribution's `https://<domain>`), which the stack builds itself and synth cannot check
 */
export const corsPolicy = (
  origins: readonly string[],
  deployTimeOrigins: readonly string[] = [],
): CorsPolicy | undefined => {
  if (origins.length === 0 && deployTimeOrigins.length === 0) return undefined;
  return {
    allowOrigins: [...origins.map(checkOrigin), ...deployTimeOrigins],
    allowMethods: [...new Set(routes.map((r) => r.method))].sort(),
    allowHeaders: ['authorization', 'content-type', 'idempotency-key'],
    exposeHeaders: [
      'idempotent-replayed',
      // GET /v1/batches/{id}/jobs: whether another page follows (issue 37).
      'has-more',
      'ratelimit-limit',
      'ratelimit-remaining',
      'ratelimit-reset',
      'retry-after',
      'x-request-id',
    ],
    maxAgeSeconds: 600,
  };
};

/** `CORS_ALLOWED_ORIGINS` and the `corsAllowedOrigins` context: comma-separated origins. */
export const parseOrigins = (value: string | undefined): string[] =>
  (value ?? '')
    .split(',')
    .map((o) => o.trim())
    .filter((o) => o !== '');
