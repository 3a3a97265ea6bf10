/**
 * The reads a render request begins beside the rate limit's write (pdf-jobs.ts `countRequest`),
 * for its `accept` to use: the month's unit counters, a saved template, a webhook endpoint. They
 * are independent of the count, so they cost no round trip of their own; they write nothing, so a
 * request the rate limit refuses, a replay or a 422 has written nothing more. Their answers,
 * errors included, are used by `accept` in the contract's order. Kept by the request's principal
 * (gone with it) and its source (the same request's), and taken once.
 */

import type { UnitCounters, UsageStore } from '../accounts/usage.js';
import { monthOf } from '../common/clock.js';
import type { Clock, WebhookEndpoints } from '../common/ports.js';
import type { Principal } from '../common/principal.js';
import type { Template, TemplateStore } from '../templates/templates.js';
import type { RenderCommand, RenderSource } from './render-command.js';

export interface EarlyReads {
  readonly source: RenderSource;
  readonly month: string;
  /** The month's unit counters; undefined when the read failed (read again when checked). */
  readonly units: Promise<UnitCounters | undefined>;
  readonly template?: Promise<Template>;
  readonly webhook?: { readonly id: string; readonly exists: Promise<boolean> };
}

export interface EarlyReadsDeps {
  readonly usage: UsageStore;
  readonly templates: TemplateStore;
  readonly webhooks?: WebhookEndpoints | undefined;
  readonly clock: Clock;
}

/** A promise whose rejection is answered later, if ever: not an unhandled one meanwhile. */
const handled = <T>(read: Promise<T>): Promise<T> => {
  read.catch(() => undefined);
  return read;
};

export const createEarlyReads = ({ usage, templates, webhooks, clock }: EarlyReadsDeps) => {
  const begun = new WeakMap<Principal, EarlyReads>();
  return {
    begin(principal: Principal, { source, webhookId }: RenderCommand): void {
      const { accountId } = principal;
      const month = monthOf(clock.now());
      begun.set(principal, {
        source,
        month,
        units: usage.readUnits(accountId, month).catch(() => undefined),
        ...(source.kind === 'saved'
          ? {
              template: handled(
                templates.getReadable(source.templateId, accountId, source.version ?? undefined),
              ),
            }
          : {}),
        ...(webhookId !== null && webhooks
          ? { webhook: { id: webhookId, exists: handled(webhooks.exists(accountId, webhookId)) } }
          : {}),
      });
    },

    /** The reads begun for the request of `source`, once. */
    take(principal: Principal, source: RenderSource): EarlyReads | undefined {
      const early = begun.get(principal);
      if (early?.source !== source) return undefined;
      begun.delete(principal);
      return early;
    },
  };
};
