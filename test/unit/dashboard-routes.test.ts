/** The dashboard's page addresses (lib/dashboard/site/routes.ts): each href leads back to its page. */
import { describe, expect, it } from 'vitest';
import { href, parseRoute } from '../../lib/dashboard/site/routes.js';

describe('dashboard routes', () => {
  it('reads back every page it links to, ids with reserved characters included', () => {
    const id = 'bat_01/odd id';
    expect(parseRoute(href.batches)).toEqual({ page: 'batches' });
    expect(parseRoute(href.batch(id))).toEqual({ page: 'batch', id });
    expect(parseRoute(href.webhooks)).toEqual({ page: 'webhooks' });
    expect(parseRoute(href.webhook(id))).toEqual({ page: 'webhook', id });
    expect(parseRoute(href.jobs)).toEqual({ page: 'jobs' });
    expect(parseRoute(href.template(id))).toEqual({ page: 'template', id });
    expect(parseRoute(href.newTemplate)).toEqual({ page: 'template', id: undefined });
  });

  it('opens the keys page for an address it does not know', () => {
    expect(parseRoute('#/nowhere')).toEqual({ page: 'keys' });
    expect(parseRoute('')).toEqual({ page: 'keys' });
  });
});
