/** The usage resource's Lambda: one read of the month's counters and the rate window. */

import type { Environment } from '../core/config.js';
import { readResourceConfig } from '../core/config.js';
import { createResourceHandler, type LambdaHandler } from '../core/http.js';
import { wiringOf } from '../route-declaration.js';
import * as build from '../services.js';
import { usageResource } from './routes.js';

export const createHandler = (env: Environment): LambdaHandler => {
  const services = build.createServices(readResourceConfig(wiringOf(usageResource), env));
  const report = services.get(build.usageReport);
  return createResourceHandler(usageResource, services.get(build.http)(), {
    getUsage: ({ principal }) => report(principal),
  });
};
