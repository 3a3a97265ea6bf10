/**
 * Back-pressure from the renderer (issue 19): past its concurrent renders and its queue, a render
 * answers 503 SERVICE_BUSY with Retry-After and its job's id, the job fails with that code, and
 * its quota unit comes back; the renders admitted complete.
 */
import { describe, expect, it } from 'vitest';
import { useLocalStack } from '../helpers/local-stack.js';

// One render at a time and one waiting: a burst of five leaves three refused. The plan runs more
// renders at once than the burst, so that its concurrency (429, back-pressure.test.ts) does not
// answer for the renderer's.
const local = useLocalStack({
  env: {
    RENDERER_MAX_CONCURRENT_RENDERS: '1',
    PLANS: JSON.stringify({ free: { monthlyRenders: 100, rendersPerMinute: 100, concurrentRenders: 10 } }),
  },
});

// In flight for at least 1 s: the page adds the awaited element after that.
const slowPage = {
  html: '<p>slow</p><script>setTimeout(() => { const p = document.createElement("p"); p.id = "done"; document.body.append(p); }, 1000)</script>',
  page_load: { wait_for_selector: '#done', timeout_ms: 20_000 },
};

describe('renderer admission', () => {
  it('refuses renders past its capacity with 503 SERVICE_BUSY and Retry-After, units given back', async () => {
    const token = await local.sessionToken();
    const warm = await local.api('/v1/pdf', { method: 'POST', token, body: { html: '<p>warm</p>' } });
    expect(warm.status, warm.text).toBe(201);

    const answers = await Promise.all(
      Array.from({ length: 5 }, () => local.api('/v1/pdf', { method: 'POST', token, body: slowPage })),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses, answers.map((a) => a.text).join('\n')).toEqual([201, 201, 503, 503, 503]);
    for (const busy of answers.filter((a) => a.status === 503)) {
      expect(busy.json.error.code).toBe('SERVICE_BUSY');
      const retryAfter = Number(busy.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(30);
      const job = await local.api(`/v1/pdf/${busy.json.error.job_id}`, { token });
      expect(job.json).toMatchObject({ status: 'failed', error: { code: 'SERVICE_BUSY' } });
    }
    // The warm render and the two admitted hold units; the refused ones gave theirs back.
    const usage = await local.api('/v1/usage', { token });
    expect(usage.json.renders_used).toBe(3);

    // Once the renders are done, the renderer has room again.
    const after = await local.api('/v1/pdf', { method: 'POST', token, body: { html: '<p>after</p>' } });
    expect(after.status, after.text).toBe(201);
  });
});
