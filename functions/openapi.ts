/**
 * The OpenAPI 3.1 document, derived from the route declarations (functions/routes.ts): their
 * schemas are the ones that validate requests, with the default settings' limits, so the
 * document cannot drift from what the service accepts. `npm run --silent openapi` prints it.
 */
import { z } from 'zod';
import { errorStatus } from './core/responses.js';
import { ERROR_CODES, type ErrorCode } from './domain/common/errors.js';
import { diagnosticsSchema } from './pdf/schemas.js';
import type { AnyResource, RouteDeclaration } from './route-declaration.js';
import { resources } from './routes.js';
import { type Settings, settingsSchema } from './settings.js';

export const errorSchema = z.object({
  error: z.object({
    code: z.enum(ERROR_CODES),
    message: z.string(),
    details: z
      .array(
        z.object({
          field: z.string(),
          issue: z.string(),
          line: z.number().int().optional().describe('INVALID_HTML_TEMPLATE: the template line, 1-based'),
          name: z.string().optional().describe('INVALID_HTML_TEMPLATE: the undefined variable'),
          rule: z
            .string()
            .optional()
            .describe('INVALID_E_INVOICE: the business rule (BR-CO-10) or assertion broken'),
          location: z
            .string()
            .optional()
            .describe('INVALID_E_INVOICE: where in the XML (an XPath, or a line for the XSD)'),
        }),
      )
      .optional(),
    request_id: z.string().describe('equals the X-Request-Id header'),
    job_id: z.string().optional().describe('the failed job, when one exists'),
    diagnostics: diagnosticsSchema
      .optional()
      .describe("a failed render whose page opened: what happened inside it (as on the job's diagnostics)"),
  }),
});

const jsonSchema = (schema: z.ZodType, io: 'input' | 'output') => {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' });
  return rest;
};

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: object) => ({ 'application/json': { schema } });

/**
 * Every route: what its credentials, body, query and rate limit imply, then its own codes. A
 * presented key is checked on every route, so an unknown one answers INVALID_API_KEY even where
 * keys are refused.
 */
const errorCodesOf = (d: RouteDeclaration): ErrorCode[] => [
  'UNAUTHENTICATED',
  'INVALID_API_KEY',
  'INVALID_SESSION_TOKEN',
  ...(d.credentials.includes('apiKey') ? [] : (['SESSION_REQUIRED'] as const)),
  ...(d.body ? (['INVALID_JSON', 'REQUEST_TOO_LARGE'] as const) : []),
  ...(d.rawBody ? (['REQUEST_TOO_LARGE'] as const) : []),
  ...(d.rateLimited ? (['USAGE_LIMIT_EXCEEDED'] as const) : []),
  ...(d.query ? (['VALIDATION_ERROR'] as const) : []),
  ...d.errors,
  'INTERNAL_ERROR',
];

const header = (name: string) => ({ $ref: `#/components/headers/${name}` });

/** Headers every answer of the route carries, and those particular statuses add. */
const headersFor = (d: RouteDeclaration, status: number): Record<string, object> => ({
  'X-Request-Id': header('X-Request-Id'),
  ...(d.rateLimited
    ? {
        'RateLimit-Limit': header('RateLimit-Limit'),
        'RateLimit-Remaining': header('RateLimit-Remaining'),
        'RateLimit-Reset': header('RateLimit-Reset'),
      }
    : {}),
  ...(status === 429 || status === 503 ? { 'Retry-After': header('Retry-After') } : {}),
  ...(d.headers?.some((h) => h.name === 'Idempotency-Key') && status !== 429 && status !== 401
    ? { 'Idempotent-Replayed': header('Idempotent-Replayed') }
    : {}),
  ...(status === 401 ? { 'WWW-Authenticate': header('WWW-Authenticate') } : {}),
});

const errorResponses = (d: RouteDeclaration, codes: readonly ErrorCode[]) => {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(codes)) {
    byStatus.set(errorStatus[code], [...(byStatus.get(errorStatus[code]) ?? []), code]);
  }
  return Object.fromEntries(
    [...byStatus].map(([status, list]) => [
      String(status),
      { description: list.join(', '), headers: headersFor(d, status), content: json(ref('Error')) },
    ]),
  );
};

const HEADERS = {
  'X-Request-Id': { description: 'The request id; equals error.request_id', schema: { type: 'string' } },
  'RateLimit-Limit': {
    description: "Render requests per minute on the account's plan",
    schema: { type: 'integer', minimum: 0 },
  },
  'RateLimit-Remaining': {
    description: 'Render requests left in the current 60-second window',
    schema: { type: 'integer', minimum: 0 },
  },
  'RateLimit-Reset': {
    description: 'Seconds until the current window ends',
    schema: { type: 'integer', minimum: 1, maximum: 60 },
  },
  'Retry-After': {
    description: 'Seconds until a retry can succeed',
    schema: { type: 'integer', minimum: 0 },
  },
  'Idempotent-Replayed': {
    description: "true when the answer repeats an earlier request's with the same Idempotency-Key and body",
    schema: { type: 'string', enum: ['true'] },
  },
  'WWW-Authenticate': {
    description: 'Bearer, with error="invalid_token" when a credential was given and refused',
    schema: { type: 'string' },
  },
};

const DESCRIPTION = [
  'HTML+CSS in, PDF out. Credentials: `Authorization: Bearer <API key or session token>`.',
  'Every error has the body `Error`. A path answers other methods with 405 METHOD_NOT_ALLOWED',
  '(and an `Allow` header), an unknown path with 404 NOT_FOUND, and a body over 6 MiB with 413',
  'REQUEST_TOO_LARGE. Every answer carries `X-Content-Type-Options: nosniff` and',
  '`Cache-Control: no-store`. Inline `html` is limited to 5 MiB of UTF-8 and `variables` to 1 MiB',
  'as JSON by default (deployment settings).',
].join(' ');

const pathParameters = (path: string) =>
  [...path.matchAll(/\{(\w+)\+?\}/g)].map(([, name]) => ({
    name,
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));

const queryParameters = (d: RouteDeclaration) => {
  const query = d.query;
  if (!(query instanceof z.ZodObject)) return [];
  const defaults = query.parse({}) as Record<string, unknown>;
  return Object.entries(query.shape as Record<string, z.ZodType>).map(([name, field]) => ({
    name,
    in: 'query',
    required: false,
    schema: {
      ...jsonSchema(field, 'output'),
      ...(defaults[name] !== undefined ? { default: defaults[name] } : {}),
    },
  }));
};

const upperFirst = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

export const openApiDocument = (all: readonly AnyResource[] = resources) => {
  const settings: Settings = settingsSchema.parse({});
  const schemas: Record<string, object> = { Error: jsonSchema(errorSchema, 'output') };
  const paths: Record<string, Record<string, object>> = {};
  for (const r of all) {
    for (const [name, d] of Object.entries(r.routes) as [string, RouteDeclaration][]) {
      const body = d.success.body;
      if (body) schemas[body.name] = jsonSchema(body.schema, 'output');
      const requestName = `${upperFirst(name)}Request`;
      if (d.body) schemas[requestName] = jsonSchema(d.body.schema(settings), 'input');
      paths[d.path] = {
        ...paths[d.path],
        [d.method.toLowerCase()]: {
          operationId: name,
          tags: [r.name],
          summary: d.summary,
          parameters: [
            ...pathParameters(d.path),
            ...queryParameters(d),
            ...(d.headers ?? []).map((h) => ({
              name: h.name,
              in: 'header',
              required: false,
              description: h.description,
              schema: h.schema,
            })),
          ],
          ...(d.body ? { requestBody: { required: true, content: json(ref(requestName)) } } : {}),
          ...(d.rawBody
            ? {
                requestBody: {
                  required: true,
                  description: d.rawBody.description,
                  content: Object.fromEntries(
                    d.rawBody.mediaTypes.map((t) => [t, { schema: { type: 'string', format: 'binary' } }]),
                  ),
                },
              }
            : {}),
          responses: {
            [String(d.success.status)]: {
              description: d.success.description,
              headers: headersFor(d, d.success.status),
              ...(body
                ? { content: json(body.array ? { type: 'array', items: ref(body.name) } : ref(body.name)) }
                : {}),
            },
            ...(d.accepted
              ? {
                  '202': {
                    description: d.accepted.description,
                    headers: {
                      ...headersFor(d, 202),
                      ...Object.fromEntries(
                        Object.entries(d.accepted.headers).map(([name, h]) => [
                          name,
                          { description: h.description, schema: { type: 'string' } },
                        ]),
                      ),
                    },
                    ...(body
                      ? {
                          content: json(
                            body.array ? { type: 'array', items: ref(body.name) } : ref(body.name),
                          ),
                        }
                      : {}),
                  },
                }
              : {}),
            ...errorResponses(d, errorCodesOf(d)),
          },
          security: d.credentials.map((kind) => ({ [kind === 'apiKey' ? 'apiKey' : 'session']: [] })),
        },
      };
    }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'PDF rendering service',
      version: '1',
      description: DESCRIPTION,
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [
      { url: 'http://127.0.0.1:3000', description: 'the local stack (npm start)' },
      {
        url: 'https://{apiId}.execute-api.{region}.amazonaws.com',
        description: 'a deployment (the stack output ApiUrl)',
        variables: { apiId: { default: 'abcdef1234' }, region: { default: 'eu-west-1' } },
      },
    ],
    tags: all.map((r) => ({ name: r.name, description: r.description })),
    paths,
    components: {
      headers: HEADERS,
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'an API key, pdf_live_…' },
        session: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'a Cognito ID token' },
      },
      schemas,
    },
  };
};
