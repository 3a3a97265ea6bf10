/**
 * The merges resource's Lambda: its route bound to one call into the merge use case, with the
 * renderer its render parts go to, the bucket its parts are read from and the merge written to,
 * and the render queue an async merge waits in.
 */
import { type Environment, readResourceConfig } from '../core/config.js';
import { createResourceHandler, type LambdaHandler } from '../core/http.js';
import { planAllowance } from '../domain/accounts/usage.js';
import type { Renderer } from '../domain/common/ports.js';
import { acceptedJobReply, jobResponse } from '../pdf/schemas.js';
import { wiringOf } from '../route-declaration.js';
import * as build from '../services.js';
import { DEFAULT_PLAN } from '../settings.js';
import { webhookPayloads } from '../webhook-payloads.js';
import type { WebhookParts } from '../webhooks/queue.js';
import { mergesResource } from './routes.js';

export interface MergesParts extends WebhookParts {
  /** The local stack's in-process renderer; in the cloud the renderer Lambda is invoked. */
  readonly renderer?: Renderer;
}

export const createHandler = (env: Environment, parts: MergesParts = {}): LambdaHandler => {
  const services = build.createServices(
    readResourceConfig(wiringOf(mergesResource), env),
    parts,
    webhookPayloads,
  );
  const { settings } = services;
  const merges = services.get(build.merges);
  const usage = services.get(build.usage);

  // A merge is one request against the per-minute rate limit; its units are counted as it runs.
  return createResourceHandler(
    mergesResource,
    services.get(build.http)((principal) =>
      usage.hitRateLimit(principal.accountId, planAllowance(settings.plans, principal.plan, DEFAULT_PLAN)),
    ),
    {
      createMerge: async ({ principal, body, headers }) => {
        const view = await merges.create(principal, body);
        return view.job.mode === 'async' ? acceptedJobReply(view, headers.prefer) : jobResponse(view);
      },
    },
  );
};
