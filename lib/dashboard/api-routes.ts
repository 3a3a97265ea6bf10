/**
 * The API routes the dashboard's code snippets call, read from the route declarations
 * (functions/routes.ts), the same ones the OpenAPI document is made from. The page cannot carry the
 * declarations (zod and the domain's checks): the build gives it this data instead
 * (lib/dashboard/build.ts), and test/unit/dashboard-snippets.test.ts checks the snippets against it.
 */
import { z } from 'zod';
import type { RouteDeclaration } from '../../functions/route-declaration.js';
import { resources } from '../../functions/routes.js';
import { settingsSchema } from '../../functions/settings.js';
import type { SnippetRoute, SnippetRoutes } from './site/snippets.js';

const snippetRoute = (d: RouteDeclaration): SnippetRoute => {
  const schema = d.body?.schema(settingsSchema.parse({}));
  const properties = schema
    ? ((z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as { properties?: object })
        .properties ?? {})
    : {};
  return {
    method: d.method,
    path: d.path,
    bodyFields: Object.keys(properties),
    acceptsApiKey: d.credentials.includes('apiKey'),
  };
};

/** A declaration by its name (the OpenAPI operationId), wherever its resource declares it. */
const declared = (name: string): RouteDeclaration => {
  const found = resources.map((r) => r.routes[name]).find((d) => d !== undefined);
  if (!found) throw new Error(`dashboard snippets: the route table has no ${name}`);
  return found;
};

export const snippetRoutes = (): SnippetRoutes => ({
  createPdf: snippetRoute(declared('createPdf')),
});
