/** The me resource's Lambda: the signed-in account, as read on this request. */
import type { Environment } from '../core/config.js';
import { readResourceConfig } from '../core/config.js';
import { createResourceHandler, type LambdaHandler } from '../core/http.js';
import { wiringOf } from '../route-declaration.js';
import * as build from '../services.js';
import { meResource } from './routes.js';

export const createHandler = (env: Environment): LambdaHandler => {
  const services = build.createServices(readResourceConfig(wiringOf(meResource), env));
  const accounts = services.get(build.accounts);
  return createResourceHandler(meResource, services.get(build.http)(), {
    // Authentication has just made sure the account exists and carries the token's email.
    getMe: ({ principal }) => accounts.ensure(principal.accountId, principal.email),
  });
};
