/**
 * Previews and the editor's variable check (issue 40), on the memory parts through the
 * composition root: a preview renders what a render would, with a PREVIEW stamp and none of the
 * finishing a viewer cannot show, holds no job and no unit, and is capped per account a minute and
 * a day; the variable check is the render's own introspection, checked against every case of the
 * Jinja2 corpora (test/templating/cases) and Jinja2's own answers (goldens.json).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryRenderer } from '../../../functions/adapters/memory/renderer.js';
import type { Renderer, RenderRequest } from '../../../functions/domain/common/ports.js';
import { PREVIEW_MARK } from '../../../functions/domain/renders/previews.js';
import type { RenderCommand } from '../../../functions/domain/renders/render-command.js';
import { previews, refusedRequests, templateManagement } from '../../../functions/services.js';
import { PREVIEWS_PER_ACCOUNT, REFUSED_REQUESTS_PER_MINUTE } from '../../../functions/settings.js';
import { readTemplateDataText } from '../../../functions/templating/index.js';
import { caller, type MemoryServices, memoryServices } from '../../helpers/memory-services.js';
import { rejection } from '../../helpers/rejection.js';

const MONTH = '2026-11';

const command = (over: Partial<RenderCommand> = {}): RenderCommand => ({
  source: { kind: 'inline', html: '<p>Hello {{ name }}</p>', headerHtml: null, footerHtml: null },
  variables: readTemplateDataText('{"name": "Ada"}'),
  options: {},
  idempotency: null,
  mode: 'sync',
  webhookId: null,
  ...over,
});

/** The memory renderer, keeping what it was asked to render. */
const recording = () => {
  const inner = createMemoryRenderer();
  const requests: RenderRequest[] = [];
  const renderer: Renderer = {
    render: (request) => {
      requests.push(request);
      return inner.render(request);
    },
  };
  return { renderer, requests };
};

let m: MemoryServices;
afterEach(() => m?.close());

describe('a preview', () => {
  it('renders with a PREVIEW stamp and holds no job, no unit and no usage', async () => {
    const { renderer, requests } = recording();
    m = memoryServices({ renderer });
    const who = caller();
    const view = await m.services.get(previews).create(
      who,
      command({
        options: {
          stamp: { text: 'PAID' },
          watermark: { text: 'DRAFT' },
          protection: { owner_password: 'owner-secret-1' },
        },
      }),
    );
    expect(view.page_count).toBe(1);
    expect(view.download_url).toContain(`previews/${who.accountId}/prv_`);
    expect(view.previews_remaining).toEqual({
      minute: PREVIEWS_PER_ACCOUNT.minute - 1,
      day: PREVIEWS_PER_ACCOUNT.day - 1,
    });
    const [request] = requests;
    // The caller's stamp and watermark are drawn, the PREVIEW mark over them; no password on a preview.
    expect(request?.stamp?.text).toBe('PAID');
    expect(request?.preview_mark).toEqual(PREVIEW_MARK);
    expect(request?.watermark?.text).toBe('DRAFT');
    expect(request?.protection).toBeUndefined();
    expect(await m.jobs.list(who.accountId, { limit: 10, offset: 0 })).toEqual([]);
    expect(await m.ledger(who.accountId, MONTH)).toMatchObject({ rendersUsed: 0, inFlight: 0 });
    expect(await m.usage.readMonth(who.accountId, MONTH)).toEqual({
      rendersUsed: 0,
      pdfBytes: 0,
      renderMs: 0,
    });
  });

  it("applies a saved template's options, the request's over them, as a render does", async () => {
    const { renderer, requests } = recording();
    m = memoryServices({ renderer });
    const who = caller();
    const template = await m.services.get(templateManagement).create(who, {
      name: 'A4 letter',
      html: '<p>{{ name }}</p>',
      pdf_options: { format: 'A4', landscape: true },
    } as never);
    const saved = command({ source: { kind: 'saved', templateId: template.id, version: null } });
    await m.services.get(previews).create(who, saved);
    await m.services.get(previews).create(who, { ...saved, options: { format: 'LETTER' } });
    expect(requests.map((r) => [r.pdf.format, r.pdf.landscape])).toEqual([
      ['A4', true],
      ['LETTER', true],
    ]);
  });

  it('answers what a render answers for a missing variable, and counts it', async () => {
    m = memoryServices();
    const who = caller();
    const e = await rejection(
      m.services.get(previews).create(who, command({ variables: readTemplateDataText('{}') })),
    );
    expect(e.code).toBe('INVALID_HTML_TEMPLATE');
    expect(e.message).toMatch(/'name' is undefined/);
  });

  it('is capped per account a minute and a day, apart from renders', async () => {
    m = memoryServices();
    const who = caller();
    const preview = () => m.services.get(previews).create(who, command());
    for (let i = 0; i < PREVIEWS_PER_ACCOUNT.minute; i++) await preview();
    const refused = await rejection(preview());
    expect(refused.code).toBe('USAGE_LIMIT_EXCEEDED');
    expect(refused.message).toMatch(new RegExp(`${PREVIEWS_PER_ACCOUNT.minute} previews per minute`));
    // Another account is not held back.
    await m.services.get(previews).create(caller(), command());
    // The day's cap: the day's window holds the day's previews so far (filled in the store, not
    // rendered one by one); the next minute's first preview past it is refused.
    for (let made = PREVIEWS_PER_ACCOUNT.minute; made < PREVIEWS_PER_ACCOUNT.day; made++)
      await m.usage.hitWindow(
        { accountId: who.accountId },
        'previews_day',
        PREVIEWS_PER_ACCOUNT.day,
        'previews',
      );
    m.clock.advance(60_000);
    const day = await rejection(preview());
    expect(day.message).toMatch(new RegExp(`${PREVIEWS_PER_ACCOUNT.day} previews per day`));
  });
});

describe('requests refused before any work', () => {
  it('are bounded per account and per address, a loopback address aside', async () => {
    m = memoryServices();
    const refused = m.services.get(refusedRequests);
    const who = caller();
    for (let i = 0; i < REFUSED_REQUESTS_PER_MINUTE.account; i++) await refused({ principal: who });
    expect((await rejection(refused({ principal: who }))).code).toBe('USAGE_LIMIT_EXCEEDED');
    for (let i = 0; i < REFUSED_REQUESTS_PER_MINUTE.ip; i++) await refused({ ip: '203.0.113.9' });
    expect((await rejection(refused({ ip: '203.0.113.9' }))).message).toMatch(/refused requests/);
    for (let i = 0; i <= REFUSED_REQUESTS_PER_MINUTE.ip; i++) await refused({ ip: '127.0.0.1' });
    // The render window is untouched by all of it.
    expect(
      await m.usage.readRateLimit(who.accountId, { monthlyRenders: 1, rendersPerMinute: 10 }),
    ).toMatchObject({ remaining: 10 });
  });
});

// The Jinja2 corpora: every construct, with Jinja2's own answers.
const root = new URL('../../templating/', import.meta.url);
const cases = readdirSync(new URL('cases/', root))
  .filter((f) => f.endsWith('.json'))
  .flatMap(
    (f) =>
      JSON.parse(readFileSync(new URL(`cases/${f}`, root), 'utf8')) as {
        name: string;
        template: string;
        variables?: Record<string, unknown>;
      }[],
  );
const goldens = (
  JSON.parse(readFileSync(new URL('goldens.json', root), 'utf8')) as {
    cases: Record<string, { output?: string; undeclared?: string[] }>;
  }
).cases;
const knownDifferences = JSON.parse(readFileSync(new URL('known-differences.json', root), 'utf8')) as Record<
  string,
  unknown
>;

describe("the editor's variable check", () => {
  const check = (html: string) =>
    m.services.get(previews).variables(caller('roomy'), { html }, Number.POSITIVE_INFINITY);

  it("never lists a keyword argument, a loop variable, a macro's parameter or a set name", async () => {
    m = memoryServices();
    const readme =
      '<h1>Invoice {{ number }}</h1>{% for l in lines %}<p>{{ l.item }}: {{ "%.2f"|format(l.price) }}</p>{% endfor %}' +
      "<p>Total {{ lines|sum(attribute='price') }}</p>" +
      '{% macro row(label, value=0) %}{{ label }} {{ value }}{% endmacro %}{{ row("Tax", tax) }}' +
      '{% set shown = number ~ "!" %}{{ shown }}{% for k, v in extra.items() %}{{ loop.index }}{{ k }}{{ v }}{% endfor %}' +
      '{% with x = 1 %}{{ x }}{% endwith %}{{ items|map(attribute="name")|join(", ") }}{% if note is defined %}{{ note }}{% endif %}';
    expect(await check(readme)).toEqual({
      variables: ['extra', 'items', 'lines', 'note', 'number', 'tax'],
      // `tax` only passed on and printed: a render does without it (it prints empty), as Jinja2's does.
      required: ['extra', 'items', 'lines', 'number'],
    });
  });

  it('names what Jinja2 names for every case of the corpora, and requires nothing a case renders without', async () => {
    m = memoryServices();
    let checked = 0;
    const wrong: string[] = [];
    for (const c of cases) {
      const golden = goldens[c.name];
      if (!golden?.undeclared || c.name in knownDifferences) continue;
      const got = await check(c.template).catch((e: Error) => e.message);
      checked++;
      if (typeof got === 'string') {
        wrong.push(`${c.name}: ${got}`);
        continue;
      }
      if (JSON.stringify(got.variables) !== JSON.stringify(golden.undeclared))
        wrong.push(
          `${c.name}: jinja2 ${JSON.stringify(golden.undeclared)}, ours ${JSON.stringify(got.variables)}`,
        );
      // A case Jinja2 renders with its variables: none of what we require is missing from them.
      if (golden.output !== undefined) {
        const missing = got.required.filter((n) => !Object.hasOwn(c.variables ?? {}, n));
        if (missing.length > 0) wrong.push(`${c.name}: reported missing ${missing.join(', ')}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(checked).toBeGreaterThan(1000);
  });

  it('answers a syntax error with its part and line', async () => {
    m = memoryServices();
    const e = await rejection(check('<p>\n{% for x in %}</p>'));
    expect(e.code).toBe('INVALID_HTML_TEMPLATE');
    expect(e.details?.[0]).toMatchObject({ field: 'html', line: 2 });
  });
});
