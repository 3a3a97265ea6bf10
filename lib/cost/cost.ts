/**
 * What the stack costs, computed from its synthesized template and the dated price table beside
 * this file (prices.json: region, source, date), not written by hand: the idle cost a month (the
 * resources billed whether or not anyone uses the service) and the cost per 1,000 PDFs of the
 * bench's fixtures (the renderer's and the pdf function's memory and architecture read from the
 * template). `npm run cost` prints both; docs/deploy.md's tables are its output, and
 * test/unit/cdk-cost.test.ts fails when they drift.
 */
import { readFileSync } from 'node:fs';

// biome-ignore lint/suspicious/noExplicitAny: CloudFormation JSON
type Json = any;

export interface PriceTable {
  readonly region: string;
  readonly currency: string;
  readonly date: string;
  readonly source: string;
  readonly monthly: Readonly<
    Record<string, { readonly price: number; readonly per: 'resource' | 'metric'; readonly note: string }>
  >;
  readonly payPerUse: Readonly<Record<string, string>>;
  /** Types that cost nothing themselves (configuration: roles, policies, routes, mappings). */
  readonly free: readonly string[];
  readonly perRequest: {
    readonly lambdaX86PerGbSecond: number;
    readonly lambdaArmPerGbSecond: number;
    readonly lambdaPerMillionRequests: number;
    readonly httpApiPerMillionRequests: number;
    readonly dynamoDbPerMillionWriteUnits: number;
    readonly dynamoDbPerMillionReadUnits: number;
    readonly s3PutPer1000: number;
    readonly s3GetPer1000: number;
    /** Lambda provisioned concurrency (x86_64): each provisioned GB, every second of the month. */
    readonly lambdaX86ProvisionedPerGbSecond: number;
    /** Duration of invocations served by provisioned environments (x86_64), instead of the on-demand price. */
    readonly lambdaX86ProvisionedDurationPerGbSecond: number;
    readonly hoursPerMonth: number;
  };
  readonly fixtures: { readonly source: string } & Readonly<Record<string, FixtureWorkload | string>>;
}

export interface FixtureWorkload {
  readonly rendererMs: number;
  readonly apiMs: number;
  readonly dynamoDbWriteUnits: number;
  readonly dynamoDbReadUnits: number;
}

export const readPriceTable = (): PriceTable =>
  JSON.parse(readFileSync(new URL('./prices.json', import.meta.url), 'utf8')) as PriceTable;

export interface IdleLine {
  readonly type: string;
  readonly resources: number;
  /** What the price is counted in: resources, or alarms' metrics. */
  readonly units: number;
  readonly unitPrice: number;
  readonly monthly: number;
  readonly note: string;
}

/** The metrics an alarm reads: one, or those of its expression (expressions themselves are free). */
const alarmMetrics = (alarm: Json): number =>
  alarm.Properties.MetricName ? 1 : (alarm.Properties.Metrics ?? []).filter((m: Json) => m.MetricStat).length;

const resourcesByType = (template: Json): Map<string, Json[]> => {
  const byType = new Map<string, Json[]>();
  for (const r of Object.values(template.Resources ?? {}) as Json[]) {
    byType.set(r.Type, [...(byType.get(r.Type) ?? []), r]);
  }
  return byType;
};

/** The resources billed by the month, idle or not, each type with its count and price. */
export const idleCost = (template: Json, prices: PriceTable): { lines: IdleLine[]; total: number } => {
  const byType = resourcesByType(template);
  const lines = Object.entries(prices.monthly).flatMap(([type, p]): IdleLine[] => {
    const found = byType.get(type) ?? [];
    if (found.length === 0) return [];
    const units = p.per === 'metric' ? found.reduce((n, a) => n + alarmMetrics(a), 0) : found.length;
    return [
      { type, resources: found.length, units, unitPrice: p.price, monthly: units * p.price, note: p.note },
    ];
  });
  return { lines, total: lines.reduce((sum, l) => sum + l.monthly, 0) };
};

/** Resource types in the template that the price table does not name (a new kind of resource). */
export const unpricedTypes = (template: Json, prices: PriceTable): string[] =>
  [...resourcesByType(template).keys()]
    .filter((t) => !(t in prices.monthly) && !(t in prices.payPerUse) && !prices.free.includes(t))
    .sort();

export interface LambdaShape {
  readonly memoryMiB: number;
  readonly arm: boolean;
}

/** A function's memory and architecture, as the template gives them. */
export const lambdaShape = (template: Json, logicalId: string): LambdaShape => {
  const fn = template.Resources?.[logicalId];
  if (fn?.Type !== 'AWS::Lambda::Function')
    throw new Error(`${logicalId} is not a Lambda function of the template`);
  return {
    memoryMiB: fn.Properties.MemorySize ?? 128,
    arm: (fn.Properties.Architectures ?? ['x86_64']).includes('arm64'),
  };
};

export interface PerThousand {
  readonly renderer: number;
  readonly pdfFunction: number;
  readonly lambdaRequests: number;
  readonly apiGateway: number;
  readonly dynamoDb: number;
  readonly s3Requests: number;
  readonly total: number;
}

/** 1,000 synchronous renders of one fixture: the pdf function, the renderer, their requests. */
export const costPerThousand = (
  prices: PriceTable,
  shapes: { readonly renderer: LambdaShape; readonly pdfFunction: LambdaShape },
  w: FixtureWorkload,
): PerThousand => {
  const p = prices.perRequest;
  const compute = (ms: number, s: LambdaShape) =>
    1000 *
    (Math.max(1, Math.ceil(ms)) / 1000) *
    (s.memoryMiB / 1024) *
    (s.arm ? p.lambdaArmPerGbSecond : p.lambdaX86PerGbSecond);
  const renderer = compute(w.rendererMs, shapes.renderer);
  const pdfFunction = compute(w.apiMs, shapes.pdfFunction);
  // Two invocations per PDF: the pdf function and the renderer.
  const lambdaRequests = (2 * 1000 * p.lambdaPerMillionRequests) / 1e6;
  const apiGateway = (1000 * p.httpApiPerMillionRequests) / 1e6;
  const dynamoDb =
    (1000 *
      (w.dynamoDbWriteUnits * p.dynamoDbPerMillionWriteUnits +
        w.dynamoDbReadUnits * p.dynamoDbPerMillionReadUnits)) /
    1e6;
  // The renderer's PUT and one download per PDF.
  const s3Requests = p.s3PutPer1000 + p.s3GetPer1000;
  return {
    renderer,
    pdfFunction,
    lambdaRequests,
    apiGateway,
    dynamoDb,
    s3Requests,
    total: renderer + pdfFunction + lambdaRequests + apiGateway + dynamoDb + s3Requests,
  };
};

const dollars = (n: number, digits = 2): string => `$${n.toFixed(digits)}`;

/**
 * What one provisioned environment of the renderer costs a month (its `provisionedConcurrency`,
 * default 0: not in the idle table above), and what renders served by it are billed instead.
 */
export const provisionedMonthly = (prices: PriceTable, renderer: LambdaShape): number =>
  (renderer.memoryMiB / 1024) *
  prices.perRequest.hoursPerMonth *
  3600 *
  prices.perRequest.lambdaX86ProvisionedPerGbSecond;

const provisionedLine = (prices: PriceTable, renderer: LambdaShape): string => {
  const p = prices.perRequest;
  return (
    `Provisioned concurrency (the renderer's \`rendererProvisionedConcurrency\`, default 0): each environment kept warm costs ` +
    `**${dollars(provisionedMonthly(prices, renderer))} a month** at ${renderer.memoryMiB} MiB (${p.hoursPerMonth} hours at ` +
    `$${p.lambdaX86ProvisionedPerGbSecond} per GB-second), used or not; renders it serves are billed $${p.lambdaX86ProvisionedDurationPerGbSecond} ` +
    `per GB-second instead of $${p.lambdaX86PerGbSecond}.`
  );
};

/** The deploy guide's two tables, as `npm run cost` prints them. */
export const costMarkdown = (
  template: Json,
  prices: PriceTable,
  shapes: { readonly renderer: LambdaShape; readonly pdfFunction: LambdaShape },
): string => {
  const idle = idleCost(template, prices);
  const idleRows = idle.lines.map(
    (l) =>
      `| ${l.type} | ${l.resources}${l.units !== l.resources ? ` (${l.units} metrics)` : ''} | ${dollars(l.unitPrice)} | ${dollars(l.monthly)} | ${l.note} |`,
  );
  const fixtures = Object.entries(prices.fixtures).filter(
    (e): e is [string, FixtureWorkload] => typeof e[1] === 'object',
  );
  const shape = (s: LambdaShape) => `${s.memoryMiB} MiB ${s.arm ? 'arm64' : 'x86_64'}`;
  const perRows = fixtures.map(([name, w]) => {
    const c = costPerThousand(prices, shapes, w);
    return `| ${name} | ${w.rendererMs} / ${w.apiMs} ms | ${dollars(c.renderer, 4)} | ${dollars(c.pdfFunction, 4)} | ${dollars(c.lambdaRequests + c.apiGateway, 4)} | ${dollars(c.dynamoDb, 4)} | ${dollars(c.s3Requests, 4)} | **${dollars(c.total, 4)}** |`;
  });
  return [
    `Prices: ${prices.region}, ${prices.currency}, dated ${prices.date} (lib/cost/prices.json). Idle: billed by the month whatever the traffic; free tiers not subtracted.`,
    '',
    '| Resource type | Count | Price a month | Idle cost a month | Notes |',
    '| --- | --- | --- | --- | --- |',
    ...idleRows,
    `| **Total idle** | | | **${dollars(idle.total)}** | everything else is paid per use |`,
    '',
    `Per 1,000 PDFs rendered synchronously (renderer ${shape(shapes.renderer)}, pdf function ${shape(shapes.pdfFunction)}, from the template):`,
    '',
    '| Fixture | Renderer / pdf function (billed) | Renderer | pdf function | Requests (Lambda, API Gateway) | DynamoDB | S3 requests | Total |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...perRows,
    '',
    provisionedLine(prices, shapes.renderer),
  ].join('\n');
};

/** The stack the deploy guide prices: the default one, with its alarms mailed (alarmEmail). */
export const PRICED_STACK_PROPS = { alarmEmail: 'ops@example.com' } as const;

/** Where the generated tables sit in docs/deploy.md. */
export const COST_MARKERS = {
  start: '<!-- npm run cost: start -->',
  end: '<!-- npm run cost: end -->',
} as const;

/** The deploy guide with its cost tables replaced by `tables`. */
export const withCostTables = (guide: string, tables: string): string => {
  const start = guide.indexOf(COST_MARKERS.start);
  const end = guide.indexOf(COST_MARKERS.end);
  if (start < 0 || end < start)
    throw new Error(`the deploy guide has no ${COST_MARKERS.start} … ${COST_MARKERS.end}`);
  return `${guide.slice(0, start + COST_MARKERS.start.length)}\n\n${tables}\n\n${guide.slice(end)}`;
};

/** A markdown text with its tables' cells unpadded, as the generator writes them (the formatter pads them). */
export const unpaddedTables = (text: string): string =>
  text
    .split('\n')
    .map((line) =>
      line.startsWith('|')
        ? line
            .split('|')
            .map((cell) => cell.trim().replace(/^-+$/, '---'))
            .join(' | ')
            .trim()
        : line,
    )
    .join('\n');

/** The guide's tables between the markers. */
export const costTablesOf = (guide: string): string => {
  const start = guide.indexOf(COST_MARKERS.start);
  const end = guide.indexOf(COST_MARKERS.end);
  if (start < 0 || end < start)
    throw new Error(`the deploy guide has no ${COST_MARKERS.start} … ${COST_MARKERS.end}`);
  return guide.slice(start + COST_MARKERS.start.length, end).trim();
};
