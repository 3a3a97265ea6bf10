/**
 * The templates resource's Lambda: its routes (routes.ts) bound to one call each into the
 * saved-template use cases. It needs the table only: large html is stored in the table too.
 */

import { createTemplateStore } from '../adapters/dynamodb/templates.js';
import { createUsageStore } from '../adapters/dynamodb/usage.js';
import type { Environment } from '../core/config.js';
import { readResourceConfig } from '../core/config.js';
import { createResourceHandler, type LambdaHandler } from '../core/http.js';
import { createApiRuntime, logFault } from '../core/runtime.js';
import type { Principal } from '../domain/principal.js';
import { createTemplateManagement } from '../domain/template-management.js';
import { wiringOf } from '../route-declaration.js';
import { TEMPLATE_WRITES_PER_MINUTE } from '../settings.js';
import { templatesResource } from './routes.js';

export const createHandler = (env: Environment): LambdaHandler => {
  const { db, tableName, clock, http } = createApiRuntime(
    readResourceConfig(wiringOf(templatesResource), env),
  );
  const templates = createTemplateManagement({
    store: createTemplateStore(db, tableName, clock, { onFault: logFault }),
  });
  const id = (p: Readonly<Record<string, string | undefined>>) => p.template_id ?? '';
  const usage = createUsageStore(db, tableName, clock);
  const countWrite = (principal: Principal) =>
    usage.hitTemplateWriteLimit(principal.accountId, TEMPLATE_WRITES_PER_MINUTE);

  return createResourceHandler(templatesResource, http(countWrite), {
    createTemplate: ({ principal, body }) => templates.create(principal, body),
    listTemplates: ({ principal, query }) => templates.listOwn(principal, query),
    listPublicTemplates: ({ query }) => templates.listPublic(query),
    getTemplate: ({ principal, pathParameters }) => templates.get(principal, id(pathParameters)),
    updateTemplate: ({ principal, pathParameters, body }) =>
      templates.update(principal, id(pathParameters), body),
    setTemplateVisibility: ({ principal, pathParameters, body }) =>
      templates.setVisibility(principal, id(pathParameters), body),
    deleteTemplate: ({ principal, pathParameters }) => templates.remove(principal, id(pathParameters)),
  });
};
