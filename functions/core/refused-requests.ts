/**
 * Requests refused before any work (401, 403, 400, 413, 422 from validation), counted per account
 * and per client address in windows of their own (issue 40): they no longer use the render rate
 * limit, and a flood of them is still bounded (REFUSED_REQUESTS_PER_MINUTE).
 */
import type { UsageStore } from '../domain/accounts/usage.js';
import { REFUSED_REQUESTS_PER_MINUTE } from '../settings.js';
import type { RefusedCounter } from './http.js';

/** A loopback address is the local stack's own clients (its tests, all on one address): no cap by address there. */
const LOOPBACK = /^(127\.|::1$)/;

export const countRefusedRequests =
  (usage: Pick<UsageStore, 'hitWindow'>): RefusedCounter =>
  async ({ principal, ip }) => {
    const what = 'refused requests (401, 403, 400, 413, 422)';
    await Promise.all([
      principal
        ? usage.hitWindow(
            { accountId: principal.accountId },
            'refused',
            REFUSED_REQUESTS_PER_MINUTE.account,
            what,
          )
        : undefined,
      ip && !LOOPBACK.test(ip)
        ? usage.hitWindow({ ip }, 'refused', REFUSED_REQUESTS_PER_MINUTE.ip, what)
        : undefined,
    ]);
  };
