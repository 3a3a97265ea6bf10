/**
 * An async render with `protection` (domain/renders/protection.ts, order-secrets.ts) as the
 * composition root builds it, on the memory parts (test/helpers/memory-services.ts): the
 * passwords reach the renderer, and are never kept in clear where they wait or are recorded (the
 * stored order, the queue's message, the job, the job as the API and its webhook show it), nor
 * told to the caller; the order is deleted once the job ended.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RenderRequest } from '../../../functions/domain/common/ports.js';
import type { RenderMessage } from '../../../functions/domain/renders/async-renders.js';
import { asyncRenders, renderWorker } from '../../../functions/services.js';
import { readTemplateDataText } from '../../../functions/templating/index.js';
import { caller, type MemoryServices, memoryServices } from '../../helpers/memory-services.js';

let m: MemoryServices;
afterEach(async () => {
  vi.restoreAllMocks();
  await m?.close();
});

const OWNER = 'owner-Secret-7f3a';
const USER = 'user-Secret-91bc';

describe('an async render with protection', () => {
  it('hands the passwords to the renderer and keeps them in clear nowhere else', async () => {
    m = memoryServices();
    const ada = caller();
    const accepted = await m.services.get(asyncRenders).create(ada, {
      source: { kind: 'inline', html: '<p>Payslip {{ n }}</p>', headerHtml: null, footerHtml: null },
      variables: readTemplateDataText('{"n": 11}'),
      options: { protection: { owner_password: OWNER, user_password: USER, permissions: { copying: true } } },
      idempotency: null,
      mode: 'async',
      webhookId: null,
    });
    const jobId = accepted.job.job.id;
    const clear = (value: unknown) => {
      const text = JSON.stringify(value);
      return text.includes(OWNER) || text.includes(USER);
    };
    // Accepted: what the caller is answered, the order waiting, the message, the job.
    expect(clear(accepted)).toBe(false);
    const stored = await m.renderOrders.get(ada.accountId, jobId);
    expect(stored).toBeDefined();
    expect(clear(stored)).toBe(false);
    const messages = m.renderQueue.drain();
    expect(clear(messages)).toBe(false);
    expect(clear(await m.jobs.get(ada.accountId, jobId, true))).toBe(false);

    // Rendered: the renderer is handed them, with the permissions decided.
    const seen: RenderRequest[] = [];
    const render = m.renderer.render.bind(m.renderer);
    vi.spyOn(m.renderer, 'render').mockImplementation(async (request) => {
      seen.push(request);
      return render(request);
    });
    const outcome = await m.services.get(renderWorker).handle(messages[0] as RenderMessage);
    expect(outcome).toMatchObject({ kind: 'done', why: 'completed' });
    expect(seen[0]?.protection).toEqual({
      ownerPassword: OWNER,
      userPassword: USER,
      permissions: {
        printing: 'high',
        copying: true,
        modifying: false,
        annotating: false,
        fillingForms: false,
        assembling: false,
      },
    });
    // Ended: the order is gone; the job and what GET shows hold no password.
    expect(await m.renderOrders.get(ada.accountId, jobId)).toBeUndefined();
    const done = await m.jobs.get(ada.accountId, jobId, true);
    expect(done?.status).toBe('completed');
    expect(clear(done)).toBe(false);
    expect(m.faults).toEqual([]);
  });
});
