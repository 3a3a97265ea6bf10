/**
 * The OpenAPI 3.1 document, derived from the route declarations (functions/routes.ts): their
 * schemas are the ones that validate requests, with the default settings' limits, so the
 * document cannot drift from what the service accepts. `npm run --silent openapi` prints it.
 */
import { z } from 'zod';
import { ERROR_CODES, type ErrorCode } from '../domain/errors.js';
import type { AnyResource, RouteDeclaration } from '../route-declaration.js';
import { resources } from '../routes.js';
import { type Settings, settingsSchema } from '../settings.js';
import { errorStatus } from './responses.js';

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
        }),
      )
      .optional(),
    request_id: z.string().describe('equals the X-Request-Id header'),
    job_id: z.string().optional().describe('the failed job, when one exists'),
  }),
});

const jsonSchema = (schema: z.ZodType, io: 'input' | 'output') => {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' });
  return rest;
};

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: object) => ({ 'application/json': { schema } });

/** Every route: what its credentials, body, query and rate limit imply, then its own codes. */
const errorCodesOf = (d: RouteDeclaration): ErrorCode[] => [
  'UNAUTHENTICATED',
  ...(d.credentials.includes('apiKey') ? (['INVALID_API_KEY'] as const) : []),
  'INVALID_SESSION_TOKEN',
  ...(d.credentials.includes('apiKey') ? [] : (['SESSION_REQUIRED'] as const)),
  ...(d.body ? (['INVALID_JSON', 'REQUEST_TOO_LARGE'] as const) : []),
  ...(d.rateLimited ? (['USAGE_LIMIT_EXCEEDED'] as const) : []),
  ...(d.query ? (['VALIDATION_ERROR'] as const) : []),
  ...d.errors,
  'INTERNAL_ERROR',
];

const errorResponses = (codes: readonly ErrorCode[]) => {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(codes)) {
    byStatus.set(errorStatus[code], [...(byStatus.get(errorStatus[code]) ?? []), code]);
  }
  return Object.fromEntries(
    [...byStatus].map(([status, list]) => [
      String(status),
      { description: list.join(', '), content: json(ref('Error')) },
    ]),
  );
};

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
          responses: {
            [String(d.success.status)]: {
              description: d.success.description,
              ...(body
                ? { content: json(body.array ? { type: 'array', items: ref(body.name) } : ref(body.name)) }
                : {}),
            },
            ...errorResponses(errorCodesOf(d)),
          },
          security: d.credentials.map((kind) => ({ [kind === 'apiKey' ? 'apiKey' : 'session']: [] })),
        },
      };
    }
  }
  return {
    openapi: '3.1.0',
    info: { title: 'PDF rendering service', version: '1' },
    tags: all.map((r) => ({ name: r.name, description: r.description })),
    paths,
    components: {
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'an API key, pdf_live_…' },
        session: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'a Cognito ID token' },
      },
      schemas,
    },
  };
};
