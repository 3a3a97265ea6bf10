/** The usage resource's Lambda: one read of the month's counters and the rate window. */

import { createUsageStore } from '../adapters/dynamodb/usage.js';
import type { Environment } from '../core/config.js';
import { readResourceConfig } from '../core/config.js';
import { createResourceHandler, type LambdaHandler } from '../core/http.js';
import { createApiRuntime } from '../core/runtime.js';
import { createUsageReport } from '../domain/usage-report.js';
import { wiringOf } from '../route-declaration.js';
import { DEFAULT_PLAN } from '../settings.js';
import { usageResource } from './routes.js';

export const createHandler = (env: Environment): LambdaHandler => {
  const { config, db, tableName, clock, http } = createApiRuntime(
    readResourceConfig(wiringOf(usageResource), env),
  );
  const report = createUsageReport({
    usage: createUsageStore(db, tableName, clock),
    clock,
    plans: config.settings.plans,
    defaultPlan: DEFAULT_PLAN,
  });
  return createResourceHandler(usageResource, http(), {
    getUsage: ({ principal }) => report(principal),
  });
};
