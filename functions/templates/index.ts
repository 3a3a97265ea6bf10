/**
 * The templates resource's Lambda: its routes (routes.ts) bound to one call each into the
 * saved-template use cases. It needs the table only: large html is stored in the table too.
 */

import type { Environment } from '../core/config.js';
import { readResourceConfig } from '../core/config.js';
import { createResourceHandler, type LambdaHandler } from '../core/http.js';
import type { Principal } from '../domain/common/principal.js';
import { wiringOf } from '../route-declaration.js';
import * as build from '../services.js';
import { TEMPLATE_WRITES_PER_MINUTE } from '../settings.js';
import { templatesResource } from './routes.js';

export const createHandler = (env: Environment): LambdaHandler => {
  const services = build.createServices(readResourceConfig(wiringOf(templatesResource), env));
  const templates = services.get(build.templateManagement);
  const usage = services.get(build.usage);
  const id = (p: Readonly<Record<string, string | undefined>>) => p.template_id ?? '';
  const countWrite = (principal: Principal) =>
    usage.hitTemplateWriteLimit(principal.accountId, TEMPLATE_WRITES_PER_MINUTE);

  return createResourceHandler(templatesResource, services.get(build.http)(countWrite), {
    createTemplate: ({ principal, body }) => templates.create(principal, body),
    listTemplates: ({ principal, query }) => templates.listOwn(principal, query),
    listPublicTemplates: ({ query: { starters, ...page } }) =>
      starters ? templates.listStarters(page) : templates.listPublic(page),
    getTemplate: ({ principal, pathParameters }) => templates.get(principal, id(pathParameters)),
    updateTemplate: ({ principal, pathParameters, body }) =>
      templates.update(principal, id(pathParameters), body),
    setTemplateVisibility: ({ principal, pathParameters, body }) =>
      templates.setVisibility(principal, id(pathParameters), body),
    deleteTemplate: ({ principal, pathParameters }) => templates.remove(principal, id(pathParameters)),
  });
};
