/**
 * Costs computed, not written (issue 42): the idle cost and the cost per 1,000 PDFs come from the
 * synthesized template and the dated price table (lib/cost/prices.json), and the deploy guide's
 * tables are exactly `npm run cost`'s output: a hand edit, or a stack that changed without
 * `npm run cost -- --write`, fails here.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  costMarkdown,
  costPerThousand,
  costTablesOf,
  idleCost,
  lambdaShape,
  PRICED_STACK_PROPS,
  readPriceTable,
  unpaddedTables,
  unpricedTypes,
} from '../../lib/cost/cost.js';
import { PROJECT_ROOT } from '../../lib/service-function.js';
import { type Synthesized, synthServiceStack } from '../helpers/cdk-synth.js';

const prices = readPriceTable();

describe('the cost of the stack', () => {
  let s: Synthesized;
  let tables: string;
  beforeAll(() => {
    s = synthServiceStack({ props: PRICED_STACK_PROPS });
    const pdf = s.stack.api.functions.get('pdf');
    if (!pdf) throw new Error('no pdf function');
    const template = s.template.toJSON();
    tables = costMarkdown(template, prices, {
      renderer: lambdaShape(template, s.logicalId(s.stack.renderer.function)),
      pdfFunction: lambdaShape(template, s.logicalId(pdf)),
    });
  });

  it('is in the deploy guide exactly as npm run cost prints it (run `npm run cost -- --write` after a change)', () => {
    const guide = readFileSync(join(PROJECT_ROOT, 'docs', 'deploy.md'), 'utf8');
    expect(unpaddedTables(costTablesOf(guide))).toBe(unpaddedTables(tables));
  });

  it('prices every resource type of the template, and says where and when its prices are from', () => {
    expect(unpricedTypes(s.template.toJSON(), prices)).toEqual([]);
    expect(prices.date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(prices.region).toMatch(/^[a-z]{2}-[a-z]+-\d$/);
    expect(prices.source.length).toBeGreaterThan(20);
  });

  it("counts each alarm's metrics, the dashboard, the key and the secret", () => {
    const idle = idleCost(s.template.toJSON(), prices);
    const alarms = Object.values(s.template.findResources('AWS::CloudWatch::Alarm'));
    const line = (type: string) => idle.lines.find((l) => l.type === type);
    expect(line('AWS::CloudWatch::Alarm')?.resources).toBe(alarms.length);
    // Metric-math alarms read more than one metric each (the table's throttles: six).
    expect(line('AWS::CloudWatch::Alarm')?.units).toBeGreaterThan(alarms.length);
    expect(line('AWS::CloudWatch::Dashboard')?.resources).toBe(1);
    expect(line('AWS::KMS::Key')?.resources).toBe(1);
    expect(line('AWS::SecretsManager::Secret')?.resources).toBe(1);
    expect(idle.total).toBeCloseTo(
      idle.lines.reduce((sum, l) => sum + l.units * l.unitPrice, 0),
      10,
    );
  });
});

describe('the cost per 1,000 PDFs', () => {
  it('grows with the renderer’s memory and duration, and is cheaper on arm64 at the same memory', () => {
    const w = { rendererMs: 100, apiMs: 100, dynamoDbWriteUnits: 5, dynamoDbReadUnits: 2 };
    const x86 = { memoryMiB: 2048, arm: false };
    const arm = { memoryMiB: 2048, arm: true };
    const base = costPerThousand(prices, { renderer: x86, pdfFunction: arm }, w);
    expect(
      costPerThousand(prices, { renderer: { ...x86, memoryMiB: 4096 }, pdfFunction: arm }, w).renderer,
    ).toBeCloseTo(2 * base.renderer, 10);
    expect(
      costPerThousand(prices, { renderer: x86, pdfFunction: arm }, { ...w, rendererMs: 200 }).renderer,
    ).toBeCloseTo(2 * base.renderer, 10);
    expect(costPerThousand(prices, { renderer: arm, pdfFunction: arm }, w).renderer).toBeLessThan(
      base.renderer,
    );
    // 100 ms of 2 GiB on x86: 1,000 × 0.1 s × 2 GB × the GB-second price.
    expect(base.renderer).toBeCloseTo(1000 * 0.1 * 2 * prices.perRequest.lambdaX86PerGbSecond, 10);
  });
});
