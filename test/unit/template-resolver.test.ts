/**
 * One template resolver for renders and batches (issue 33): both parse through the injected parser
 * port, so both keep the parse pool's bounds (a template that takes too long to parse answers 422
 * naming the bound, before anything is held). The parser is the real one; a fault is injected by
 * wrapping it, as the house rule has it. Every other port of the use cases is a tripwire: touching
 * it fails the test, which shows that nothing was read or held.
 */
import { describe, expect, it } from 'vitest';
import { readLimits } from '../../functions/core/config.js';
import { createBatches } from '../../functions/domain/batches/batches.js';
import { ServiceError } from '../../functions/domain/common/errors.js';
import type { Principal } from '../../functions/domain/common/principal.js';
import { createPdfJobs } from '../../functions/domain/renders/pdf-jobs.js';
import { renderOptionsFrom } from '../../functions/domain/renders/render-options.js';
import { createTemplateResolver } from '../../functions/domain/templates/render-template.js';
import type { TemplateParser } from '../../functions/domain/templates/template-check.js';
import { parseTemplateData, readTemplateDataText, TemplateError } from '../../functions/templating/index.js';
import { createTemplateParser, timeLimitMessage } from '../../functions/templating/parse-pool.js';

const limits = readLimits({});
const clock = { now: () => new Date('2026-11-28T12:00:00.000Z') };
const principal: Principal = { accountId: 'acc_1', email: undefined, credential: 'session', plan: 'free' };

/** A port that fails the test when anything reads it: nothing may be read or held. */
const untouched = <T>(name: string): T =>
  new Proxy({} as object, {
    get: (_, key) => {
      if (key === 'then') return undefined;
      throw new Error(`${name}.${String(key)} was used`);
    },
  }) as T;

/** The real parser, recording what it was asked to parse; `slow` sources fail as the pool's time limit does. */
const recordingParser = (slow?: string) => {
  const real = createTemplateParser();
  const parsed: string[] = [];
  const parser: TemplateParser = {
    async parse(source) {
      parsed.push(source);
      if (source === slow) throw new TemplateError(timeLimitMessage(3000), 'limit');
      return real.parse(source);
    },
  };
  return { parser, parsed, close: () => real.close() };
};

const resolverWith = (parser: TemplateParser) =>
  createTemplateResolver({ templates: untouched('templates'), parser, limits });

const batchesWith = (parser: TemplateParser) =>
  createBatches({
    batches: untouched('batches'),
    usage: untouched('usage'),
    resolver: resolverWith(parser),
    present: untouched('present'),
    writes: untouched('writes'),
    orders: untouched('orders'),
    queue: untouched('queue'),
    clock,
    plans: {},
    defaultPlan: 'free',
    limits,
    onFault: () => {},
  });

const pdfJobsWith = (parser: TemplateParser) =>
  createPdfJobs({
    jobs: untouched('jobs'),
    usage: untouched('usage'),
    templates: untouched('templates'),
    idempotency: untouched('idempotency'),
    lifecycle: untouched('lifecycle'),
    render: untouched('render'),
    present: untouched('present'),
    resolver: resolverWith(parser),
    clock,
    plans: {},
    defaultPlan: 'free',
    limits,
    onFault: () => {},
  });

const inline = (html: string, headerHtml: string | null = null) =>
  ({ kind: 'inline', html, headerHtml, footerHtml: null }) as const;

describe('one template resolver for renders and batches', () => {
  it('parses each part of a render through the parser port, and answers what each part needs', async () => {
    const { parser, parsed, close } = recordingParser();
    try {
      const resolved = await resolverWith(parser).resolve(
        principal,
        { source: inline('<p>{{ name }}</p>', '<b>{{ page }}</b>'), requested: {} },
        'sync',
      );
      expect(parsed).toEqual(['<p>{{ name }}</p>', '<b>{{ page }}</b>']);
      expect(resolved.required.html).toEqual([{ name: 'name', line: 1 }]);
      expect(resolved.required.header).toEqual([{ name: 'page', line: 1 }]);
      expect(resolved.options).toEqual(renderOptionsFrom({}, limits.renderBudgetMs));
    } finally {
      await close();
    }
  });

  it("answers a batch's template that exceeds the parse time limit with 422 naming the bound, holding nothing", async () => {
    const slow = '<p>{{ a }}</p>';
    const { parser, parsed, close } = recordingParser(slow);
    try {
      const error = await batchesWith(parser)
        .create(principal, {
          source: inline(slow),
          options: {},
          items: [{ variables: parseTemplateData('{"a": 1}') }],
          webhookId: null,
        })
        .catch((e: unknown) => e);
      expect(parsed).toEqual([slow]);
      expect(error).toBeInstanceOf(ServiceError);
      expect((error as ServiceError).code).toBe('INVALID_HTML_TEMPLATE');
      expect((error as ServiceError).message).toBe(timeLimitMessage(3000));
    } finally {
      await close();
    }
  });

  it("answers a render's template that exceeds the parse time limit the same way", async () => {
    const slow = '<p>{{ a }}</p>';
    const { parser, close } = recordingParser(slow);
    try {
      const jobs = pdfJobsWith(parser);
      const order = {
        source: inline(slow),
        variables: readTemplateDataText('{"a": 1}'),
        options: renderOptionsFrom({}, limits.renderBudgetMs),
        requested: {},
      };
      const error = await jobs.accept(principal, order).catch((e: unknown) => e);
      expect((error as ServiceError).code).toBe('INVALID_HTML_TEMPLATE');
      expect((error as ServiceError).message).toBe(timeLimitMessage(3000));
    } finally {
      await close();
    }
  });

  it("checks a batch's items against the parse: the first item lacking a variable answers 422 naming it", async () => {
    const { parser, close } = recordingParser();
    try {
      const error = await batchesWith(parser)
        .create(principal, {
          source: inline('<p>{{ a }}</p>'),
          options: {},
          items: [{ variables: parseTemplateData('{"a": 1}') }, { variables: parseTemplateData('{}') }],
          webhookId: null,
        })
        .catch((e: unknown) => e);
      expect((error as ServiceError).code).toBe('INVALID_HTML_TEMPLATE');
      expect((error as ServiceError).details).toEqual([
        {
          field: 'items[1].variables',
          issue: "Variable 'a' is undefined (html line 1)",
          line: 1,
          name: 'a',
        },
      ]);
    } finally {
      await close();
    }
  });
});
