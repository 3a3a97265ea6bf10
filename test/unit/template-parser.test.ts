/** Parsing off the API's thread, bounded (functions/templating/parse-pool.ts). */
import { afterAll, describe, expect, it } from 'vitest';
import { parseTemplate, TemplateError } from '../../functions/templating/index.js';
import {
  createTemplateParser,
  memoryLimitMessage,
  PARSE_OFF_THREAD_CHARACTERS,
  timeLimitMessage,
} from '../../functions/templating/parse-pool.js';
import { reportRatio } from '../helpers/timing.js';

/** A template of about `bytes` that is mostly expressions (the costliest kind to parse). */
const dense = (bytes: number): string =>
  Array.from({ length: Math.ceil(bytes / 24) }, (_, i) => `{{ v${i} ~ w${i % 7} }}\n`).join('');

const parser = createTemplateParser();
afterAll(() => parser.close());

describe('the API template parser', () => {
  it('answers what parseTemplate answers, for a large template parsed in a worker and a small one in place', async () => {
    const large = `${dense(PARSE_OFF_THREAD_CHARACTERS * 2)}{% if flag %}{{ shown }}{% endif %}`;
    expect(await parser.parse(large)).toEqual(parseTemplate(large));
    expect(await parser.parse('{{ a }}')).toEqual({ undeclared: ['a'], required: [{ name: 'a', line: 1 }] });
  });

  it('answers a large template’s syntax error with its line, as parseTemplate does', async () => {
    const broken = `${dense(PARSE_OFF_THREAD_CHARACTERS * 2)}{% if %}`;
    const inPlace = (() => {
      try {
        parseTemplate(broken);
      } catch (e) {
        return e as TemplateError;
      }
    })();
    const error = await parser.parse(broken).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TemplateError);
    expect(error).toMatchObject({ message: inPlace?.message, line: inPlace?.line, kind: 'syntax' });
  });

  it('keeps the thread free while a large template parses', async () => {
    const source = dense(1024 * 1024);
    // The control: how long the same parse holds this thread when done in place.
    const started = performance.now();
    parseTemplate(`{# in place #}${source}`, { cache: false });
    const inPlaceMs = performance.now() - started;

    let last = performance.now();
    let longestGapMs = 0;
    const ticker = setInterval(() => {
      const now = performance.now();
      longestGapMs = Math.max(longestGapMs, now - last);
      last = now;
    }, 5);
    await parser.parse(source);
    clearInterval(ticker);
    longestGapMs = Math.max(longestGapMs, performance.now() - last);
    // Parsed here, the thread would not tick for the whole parse.
    reportRatio(
      "template parser: the thread's longest gap during a pooled parse against one in place",
      longestGapMs / inPlaceMs,
      0.5,
    );
    expect(longestGapMs).toBeLessThan(inPlaceMs / 2);
  });

  it('stops a parse past its time limit, and past its memory limit, with an error naming the bound', async () => {
    const slow = createTemplateParser({ timeLimitMs: 1 });
    const tooSlow = await slow.parse(dense(1024 * 1024)).catch((e: unknown) => e);
    expect(tooSlow).toMatchObject({ kind: 'limit', message: timeLimitMessage(1) });
    await slow.close();

    const small = createTemplateParser({
      resourceLimits: { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 4, stackSizeMb: 4 },
      timeLimitMs: 60_000,
    });
    const tooLarge = await small.parse(dense(1024 * 1024)).catch((e: unknown) => e);
    expect(tooLarge).toMatchObject({ kind: 'limit', message: memoryLimitMessage(8) });
    await small.close();

    // The parser that hit nothing goes on serving.
    expect(await parser.parse(dense(PARSE_OFF_THREAD_CHARACTERS))).toEqual(
      parseTemplate(dense(PARSE_OFF_THREAD_CHARACTERS)),
    );
  }, 60_000);
});
