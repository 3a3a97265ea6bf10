/**
 * The reads a render request begins beside its rate limit's count (domain/renders/early-reads.ts:
 * the month's units, a saved template, a webhook endpoint), through the PDF job use cases as the
 * composition root builds them (functions/services.ts) on the memory parts
 * (test/helpers/memory-services.ts). They only save round trips: a request the rate limit refuses
 * has written nothing, the reservation still decides the quota, a read that failed is made again,
 * the answers come in the contract's order, and a request uses only the reads begun for it.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { newWebhookId } from '../../../functions/domain/common/ids.js';
import type { Principal } from '../../../functions/domain/common/principal.js';
import type { RenderCommand, RenderSource } from '../../../functions/domain/renders/render-command.js';
import { pdfJobs, templateManagement } from '../../../functions/services.js';
import { readTemplateDataText } from '../../../functions/templating/index.js';
import { caller, type MemoryServices, memoryServices } from '../../helpers/memory-services.js';
import { readPdf } from '../../helpers/pdf.js';
import { rejection } from '../../helpers/rejection.js';

const inline = (html: string): RenderSource => ({ kind: 'inline', html, headerHtml: null, footerHtml: null });

const command = (source: RenderSource, webhookId: string | null = null): RenderCommand => ({
  source,
  variables: readTemplateDataText('{}'),
  options: {},
  idempotency: null,
  mode: 'sync',
  webhookId,
});

/** Another request of the same caller: a principal of its own, as each request authenticates. */
const again = (principal: Principal): Principal => ({ ...principal });

/** A request as the edge runs it: counted (its reads begun), then created. */
const request = async (principal: Principal, c: RenderCommand) => {
  const jobs = m.services.get(pdfJobs);
  await jobs.countRequest(principal, c);
  return jobs.create(principal, c);
};

let m: MemoryServices;
afterEach(async () => {
  vi.restoreAllMocks();
  await m?.close();
});

describe('the reads begun beside a request’s count', () => {
  it('write nothing for a request the rate limit refuses', async () => {
    m = memoryServices({ settings: { plans: { free: { monthlyRenders: 10, rendersPerMinute: 1 } } } });
    const ada = caller();
    await request(ada, command(inline('<p>one</p>')));
    const refused = command(inline('<p>two</p>'), newWebhookId());
    expect((await rejection(m.services.get(pdfJobs).countRequest(again(ada), refused))).code).toBe(
      'USAGE_LIMIT_EXCEEDED',
    );
    expect(await m.ledger(ada.accountId)).toMatchObject({ completed: 1, failed: 0, open: 0, rendersUsed: 1 });
  });

  it('do not decide the quota: a request whose read saw a unit left is refused once another took it', async () => {
    m = memoryServices({ settings: { plans: { free: { monthlyRenders: 1, rendersPerMinute: 10 } } } });
    const ada = caller();
    const jobs = m.services.get(pdfJobs);
    const [first, second] = [command(inline('<p>first</p>')), command(inline('<p>second</p>'))];
    const [a, b] = [ada, again(ada)];
    // Both counted (both read a month with its unit free), then both created.
    await jobs.countRequest(a, first);
    await jobs.countRequest(b, second);
    expect((await jobs.create(a, first)).job.job.status).toBe('completed');
    const refused = await rejection(jobs.create(b, second));
    expect(refused.code).toBe('PLAN_QUOTA_EXCEEDED');
    expect(refused.jobId).toBeUndefined();
    expect(await m.ledger(ada.accountId)).toMatchObject({ completed: 1, failed: 0, open: 0, rendersUsed: 1 });
  });

  it('are made again when they failed: the request renders', async () => {
    m = memoryServices();
    const ada = caller();
    vi.spyOn(m.usage, 'readUnits').mockRejectedValueOnce(new Error('DynamoDB timed out'));
    const { job } = await request(ada, command(inline('<p>read again</p>')));
    expect(job.job.status).toBe('completed');
    expect(await m.ledger(ada.accountId)).toMatchObject({ completed: 1, rendersUsed: 1, inFlight: 0 });
  });

  it('answer in the contract’s order: an unknown endpoint before an unknown template, with nothing written', async () => {
    m = memoryServices();
    const ada = caller();
    const missing: RenderSource = {
      kind: 'saved',
      templateId: 'tpl_01JBQ5Y8S1W8M3ZT6YDV1KQ0XE',
      version: null,
    };
    expect((await rejection(request(ada, command(missing, newWebhookId())))).code).toBe(
      'WEBHOOK_ENDPOINT_NOT_FOUND',
    );
    expect((await rejection(request(again(ada), command(missing)))).code).toBe('PDF_TEMPLATE_NOT_FOUND');
    expect(await m.ledger(ada.accountId)).toMatchObject({ completed: 0, failed: 0, open: 0, rendersUsed: 0 });
  });

  it('serve only the request they were begun for', async () => {
    m = memoryServices();
    const ada = caller();
    const templates = m.services.get(templateManagement);
    const a = await templates.create(ada, { name: 'A', html: '<p>Template A</p>', is_public: false });
    const b = await templates.create(ada, { name: 'B', html: '<p>Template B</p>', is_public: false });
    const jobs = m.services.get(pdfJobs);
    const ofA = command({ kind: 'saved', templateId: a.id, version: null });
    const ofB = command({ kind: 'saved', templateId: b.id, version: null });
    // Counted for template A; created for template B (not the request the reads were begun for).
    await jobs.countRequest(ada, ofA);
    const { job } = await jobs.create(ada, ofB);
    const pdf = m.storage.object(job.job.object_key);
    const text = (await readPdf(pdf?.body as Uint8Array)).text;
    expect(text).toContain('Template B');
    expect(text).not.toContain('Template A');
  });
});
