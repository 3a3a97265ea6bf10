/**
 * The public API, called with the signed-in user's ID token. Shapes are the API's own (README,
 * `npm run openapi`); the page reads only the fields it shows. A 401 ends the session (the user
 * signs in again); every other error arrives as an ApiError carrying the contract's body.
 */
import type { components } from './api-types.js';
import { stringifyWithJsonText } from './json-text.js';

type Schemas = components['schemas'];

// The API's own shapes, generated from the route declarations' schemas (`npm run openapi -- --types`).
export type ApiKey = Schemas['ApiKey'];
export type CreatedApiKey = Schemas['CreatedApiKey'];
export type Template = Schemas['PdfTemplate'];
export type Job = Schemas['PdfJob'];
export type Account = Schemas['Account'];
export type Usage = Schemas['Usage'];
export type Diagnostics = NonNullable<Job['diagnostics']>;
export type Batch = Schemas['Batch'];
export type Webhook = Schemas['Webhook'];
export type CreatedWebhook = Schemas['CreatedWebhook'];
export type WebhookDelivery = Schemas['WebhookDelivery'];
export type Preview = Schemas['Preview'];
export type TemplateVariables = Schemas['TemplateVariables'];
export type Asset = Schemas['Asset'];
export type Destination = Schemas['Destination'];

export interface ErrorDetail {
  readonly field?: string;
  readonly issue?: string;
  readonly line?: number;
  readonly name?: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: readonly ErrorDetail[] = [],
    readonly jobId: string | undefined = undefined,
    /** Seconds, from Retry-After on a 429. */
    readonly retryAfterSeconds: number | undefined = undefined,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  /** The first line number the details name (template errors carry one). */
  get line(): number | undefined {
    return this.details.find((d) => typeof d.line === 'number')?.line;
  }
}

export interface RequestOptions {
  readonly method?: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** Written as JSON; a JsonText inside it (sample data, variables) as its text. */
  readonly body?: unknown;
  /** Sent as it is, with its own type (an asset's upload): instead of `body`. */
  readonly file?: Blob;
  readonly idempotencyKey?: string;
}

export interface ApiClient {
  request<T>(path: string, options?: RequestOptions): Promise<T>;
  /** The answer and its text, for what JSON.parse would change (a template's sample data). */
  requestWithText<T>(path: string, options?: RequestOptions): Promise<{ value: T; text: string }>;
}

interface ErrorBody {
  error?: { code?: string; message?: string; details?: ErrorDetail[]; job_id?: string };
}

/**
 * @param apiUrl the API's base URL, ending with a slash (a path is taken relative to the page)
 * @param token the current session's ID token, or undefined when there is none
 * @param onUnauthorized called on a 401: the session is over
 */
export const createApiClient = (
  apiUrl: string,
  token: () => string | undefined,
  onUnauthorized: (message: string) => void,
): ApiClient => {
  const base = new URL(apiUrl, location.href);
  const send = async <T>(
    path: string,
    { method = 'GET', body, file, idempotencyKey }: RequestOptions = {},
  ): Promise<{ value: T; text: string }> => {
    const bearer = token();
    if (bearer === undefined) {
      onUnauthorized('Sign in to continue.');
      throw new ApiError(401, 'UNAUTHENTICATED', 'Not signed in');
    }
    const headers: Record<string, string> = { authorization: `Bearer ${bearer}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (file !== undefined) headers['content-type'] = file.type || 'application/octet-stream';
    if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
    let res: Response;
    try {
      res = await fetch(new URL(path.replace(/^\//, ''), base), {
        method,
        headers,
        body: file ?? (body === undefined ? undefined : stringifyWithJsonText(body)),
      });
    } catch {
      throw new ApiError(
        0,
        'NETWORK_ERROR',
        'The API could not be reached. Check the connection and try again.',
      );
    }
    if (res.status === 204) return { value: undefined as T, text: '' };
    const text = await res.text().catch(() => '');
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    if (res.ok) return { value: json as T, text };
    const error = (json as ErrorBody | undefined)?.error;
    if (res.status === 401) onUnauthorized('Your session has ended. Sign in again.');
    const retryAfter = Number(res.headers.get('retry-after'));
    throw new ApiError(
      res.status,
      error?.code ?? `HTTP_${res.status}`,
      error?.message ?? `The API answered ${res.status}`,
      error?.details ?? [],
      error?.job_id,
      Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined,
    );
  };
  return {
    request: async <T>(path: string, options?: RequestOptions) => (await send<T>(path, options)).value,
    requestWithText: send,
  };
};

/** Downloads a finished job's PDF (a presigned link, no credentials) as a blob to show in the page. */
export const fetchPdf = async (downloadUrl: string): Promise<Blob> => {
  const res = await fetch(downloadUrl);
  if (!res.ok)
    throw new ApiError(res.status, 'PDF_DOWNLOAD_FAILED', `The PDF could not be downloaded (${res.status})`);
  return new Blob([await res.arrayBuffer()], { type: 'application/pdf' });
};
