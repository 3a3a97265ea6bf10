/**
 * Templating over HTTP, as the contract splits it: what parsing finds (syntax, missing variables)
 * answers before the quota and creates no job; what only executing the template finds (a runtime
 * error, the time limit) fails the job, with `job_id`, and gives the quota unit back. Templates
 * execute in the renderer's worker threads, so a runaway template does not hold up anyone else.
 */
import { describe, expect, it } from 'vitest';
import { WALL_BACKSTOP_FACTOR } from '../../functions/renderer/templating-pool.js';
import { type ApiResponse, type Json, useLocalStack } from '../helpers/local-stack.js';

// New accounts here have 2 renders a month (the shared stack's plan 'two-a-month').
const local = useLocalStack({ plan: 'two-a-month' });

const post = (token: string, body: unknown) => local.api('/v1/pdf', { method: 'POST', token, body });
const jobsOf = async (token: string): Promise<Json[]> => (await local.api('/v1/pdf', { token })).json;

/** A session for a new account already on `plan`. */

const expectTemplateError = (res: ApiResponse) => {
  expect(res.status, res.text).toBe(422);
  expect(res.json.error.code).toBe('INVALID_HTML_TEMPLATE');
  expect(res.json.error.details).toHaveLength(1);
  expect(res.json.error.details[0].issue).toBe(res.json.error.message);
  expect(res.text).not.toMatch(/at .*\.(ts|js|cjs|mjs):\d+/); // never a stack trace
};

/** Accounts here have 2 renders a month: both must still be there. */
const expectFullQuota = async (token: string) => {
  expect((await post(token, { html: '<p>one</p>' })).status).toBe(201);
  expect((await post(token, { html: '<p>two</p>' })).status).toBe(201);
  expect((await post(token, { html: '<p>three</p>' })).json.error.code).toBe('PLAN_QUOTA_EXCEEDED');
};

describe('errors that parsing finds: 422 before the quota, no job', () => {
  it('a syntax error names its line', async () => {
    const token = await local.sessionToken();
    const res = await post(token, { html: '<p>ok</p>\n<p>{% if %}</p>' });
    expectTemplateError(res);
    expect(res.json.error.job_id).toBeUndefined();
    expect(res.json.error.details[0]).toMatchObject({ field: 'html', line: 2 });
    expect(await jobsOf(token)).toEqual([]);
  });

  it('a variable the template cannot do without, missing from variables, names it and its line', async () => {
    const token = await local.sessionToken();
    const res = await post(token, {
      html: '<h1>{{ title }}</h1>\n{% if note is defined %}{{ note }}{% endif %}\n<p>{{ total }}</p>',
      variables: { title: 'Invoice' },
    });
    expectTemplateError(res);
    expect(res.json.error.job_id).toBeUndefined();
    expect(res.json.error.message).toBe("Variable 'total' is undefined (line 3)");
    expect(res.json.error.details).toEqual([
      { field: 'html', issue: "Variable 'total' is undefined (line 3)", line: 3, name: 'total' },
    ]);
    expect(await jobsOf(token)).toEqual([]);
  });

  it('a saved template’s errors name template_id', async () => {
    const token = await local.sessionToken('templating-owner');
    const saved = await local.api('/v1/templates', {
      method: 'POST',
      token,
      body: { name: 'needs who', html: '<p>Dear {{ who }}</p>' },
    });
    expect(saved.json.variables).toEqual(['who']);
    const res = await post(token, { template_id: saved.json.id });
    expectTemplateError(res);
    expect(res.json.error.details).toEqual([
      { field: 'template_id', issue: "Variable 'who' is undefined (line 1)", line: 1, name: 'who' },
    ]);
    expect(await jobsOf(token)).toEqual([]);
  });

  it('uses no quota', async () => {
    const token = await local.sessionToken();
    for (let i = 0; i < 3; i++) expectTemplateError(await post(token, { html: '{{ nope }}' }));
    await expectFullQuota(token);
  });
});

describe('errors that only executing the template finds: a failed job, the unit given back', () => {
  it.each([
    ['division by zero', '<p>Total</p>\n<p>{{ 1 / 0 }}</p>', {}, 2],
    ['an undefined attribute', '<p>{{ customer.name }}</p>', { customer: {} }, 1],
  ])('%s → 422 INVALID_HTML_TEMPLATE with job_id', async (_, html, variables, line) => {
    const token = await local.sessionToken();
    const res = await post(token, { html, variables });
    expectTemplateError(res);
    expect(res.json.error.details[0]).toMatchObject({ field: 'html', line });
    const jobId = res.json.error.job_id;
    expect(jobId).toMatch(/^job_/);

    const job = await local.api(`/v1/pdf/${jobId}`, { token });
    expect(job.status).toBe(200);
    expect(job.json).toMatchObject({
      id: jobId,
      status: 'failed',
      download_url: null,
      page_count: null,
      error: { code: 'INVALID_HTML_TEMPLATE', message: res.json.error.message },
    });
    await expectFullQuota(token);
  });

  it('a template that runs past 2,000 ms fails naming the limit, while other accounts are served meanwhile', async () => {
    const token = await local.accountOn('roomy');
    const others = await local.accountOn('roomy');
    // Two at once, so that a second templating worker is up before the bomb takes the first: a
    // worker's start (seconds on a busy machine) is not what this test measures.
    const warm = await Promise.all([1, 2].map((n) => post(others, { html: `<p>warm {{ ${n} }}</p>` })));
    expect(warm.map((r) => r.status)).toEqual([201, 201]);
    // Controls, in this run and under this load: the same list and render with no bomb running.
    const meanwhile = { html: '<p>{{ who }} meanwhile</p>', variables: { who: 'Someone' } };
    const control = { list: 0, render: 0 };
    {
      const t0 = performance.now();
      expect((await local.api('/v1/pdf', { token: others })).status).toBe(200);
      const t1 = performance.now();
      expect((await post(others, meanwhile)).status).toBe(201);
      control.list = t1 - t0;
      control.render = performance.now() - t1;
    }

    const started = performance.now();
    let bombDone = false;
    const bomb = post(token, {
      html: '{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}',
    }).finally(() => {
      bombDone = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 200)); // the bomb is templating now

    // Served meanwhile: the list and a render answer while the bomb still runs, the list in about
    // its control's time (waiting for the bomb would add its 2,000 ms).
    const listStarted = performance.now();
    const list = await local.api('/v1/pdf', { token: others });
    const listMs = performance.now() - listStarted;
    expect(list.status).toBe(200);
    expect(listMs).toBeLessThan(1000 + 3 * control.list);
    const render = await post(others, meanwhile);
    expect(render.status, render.text).toBe(201);
    expect(bombDone).toBe(false);

    const res = await bomb;
    expectTemplateError(res);
    expect(res.json.error.message).toContain('2000 ms');
    expect(res.json.error.job_id).toMatch(/^job_/);
    // Answered, not hung: the watchdog stops the template at 2,000 ms of its thread's CPU, which on
    // a loaded machine takes longer by the clock, and at the latest at its wall-clock backstop
    // (templating-pool.test.ts checks the CPU limit itself). A 10 s bound failed at load 14.
    expect(performance.now() - started).toBeLessThan(2_000 * WALL_BACKSTOP_FACTOR + 3 * control.render);
    const job = await local.api(`/v1/pdf/${res.json.error.job_id}`, { token });
    expect(job.json).toMatchObject({ status: 'failed', error: { code: 'INVALID_HTML_TEMPLATE' } });

    // The renderer carries on.
    expect((await post(token, { html: '<p>{{ 6 * 7 }}</p>' })).status).toBe(201);
  });
});
