/**
 * `npm run cost`: the stack's idle cost a month and the cost per 1,000 PDFs of the bench's
 * fixtures, computed from the synthesized template (the default stack with alarmEmail, as
 * docs/deploy.md prices it) and lib/cost/prices.json. `npm run cost -- --write` puts the tables
 * into docs/deploy.md (test/unit/cdk-cost.test.ts fails when they differ from this output).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, type CfnElement } from 'aws-cdk-lib';
import {
  costMarkdown,
  lambdaShape,
  PRICED_STACK_PROPS,
  readPriceTable,
  unpricedTypes,
  withCostTables,
} from '../lib/cost/cost.js';
import { createServiceStacks } from '../lib/service-app.js';
import { PROJECT_ROOT } from '../lib/service-function.js';

const context = (JSON.parse(readFileSync(join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as { context: object })
  .context;
const app = new App({ context: { ...context, 'aws:cdk:bundling-stacks': [] } });
const prices = readPriceTable();
const { service } = createServiceStacks(app, 'PdfRenderService', {
  env: { account: '123456789012', region: prices.region },
  ...PRICED_STACK_PROPS,
});
const template = app.synth().getStackByName(service.stackName).template;
const idOf = (fn: { node: { defaultChild?: unknown } }) =>
  service.getLogicalId(fn.node.defaultChild as CfnElement);
const pdf = service.api.functions.get('pdf');
if (!pdf) throw new Error('no pdf function in the stack');
const tables = costMarkdown(template, prices, {
  renderer: lambdaShape(template, idOf(service.renderer.function)),
  pdfFunction: lambdaShape(template, idOf(pdf)),
});
const unpriced = unpricedTypes(template, prices);
process.stdout.write(`${tables}\n`);
if (unpriced.length > 0) {
  process.stderr.write(
    `\ncost: not in lib/cost/prices.json (taken as free when idle): ${unpriced.join(', ')}\n`,
  );
}
if (process.argv.includes('--write')) {
  const file = join(PROJECT_ROOT, 'docs', 'deploy.md');
  writeFileSync(file, withCostTables(readFileSync(file, 'utf8'), tables));
  // The tables padded as the formatter pads them (npm run lint checks the guide's format).
  execFileSync(join(PROJECT_ROOT, 'node_modules', '.bin', 'biome'), ['format', '--write', file], {
    stdio: 'ignore',
  });
  process.stderr.write(`cost: wrote the tables into ${file}\n`);
}
