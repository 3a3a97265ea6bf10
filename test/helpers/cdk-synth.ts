/**
 * Synthesizes the app the way `cdk synth` does (lib/service-app.ts: the service stack, and the
 * us-east-1 edge stack with `waf`): cdk.json's feature flags, the props, and cdk-nag's
 * AwsSolutions pack. Tests that are not about alarms get `alarms: 'none'`. Template tests skip bundling (fast, no esbuild runs);
 * the bundle smoke test bundles for real into its own output directory.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, type CfnElement, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { CloudAssembly } from 'aws-cdk-lib/cx-api';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import stringify from 'safe-stable-stringify';
import type { PdfServiceEdgeStack } from '../../lib/edge-stack.js';
import { createServiceStacks, type ServiceAppProps } from '../../lib/service-app.js';
import { PROJECT_ROOT } from '../../lib/service-function.js';
import type { PdfServiceStack } from '../../lib/service-stack.js';

export interface SynthOptions {
  readonly props?: ServiceAppProps;
  /** Run esbuild and build the layer (slow: seconds, ~70 MB in outdir). @default false */
  readonly bundle?: boolean;
  /** @default a temporary directory chosen by the CDK */
  readonly outdir?: string;
}

export interface NagFinding {
  readonly rule: string;
  readonly severity: string;
  readonly paths: readonly string[];
}

export interface Synthesized {
  readonly stack: PdfServiceStack;
  readonly template: Template;
  /** The us-east-1 stack with the distribution and web ACL, when `waf` is on. */
  readonly edgeStack: PdfServiceEdgeStack | undefined;
  readonly edgeTemplate: Template | undefined;
  readonly assembly: CloudAssembly;
  /** Unacknowledged cdk-nag AwsSolutions findings, errors and warnings alike. */
  readonly nagFindings: readonly NagFinding[];
  /** The template's logical id of a construct (or of its default child), looked up, not hard-coded. */
  logicalId(construct: IConstruct): string;
}

const cdkJsonContext = (): Record<string, unknown> =>
  (JSON.parse(readFileSync(join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> })
    .context;

/**
 * Synthesized stacks of this process, by configuration: a synth with cdk-nag takes seconds, and
 * the template tests ask for the same few configurations many times (the default one in three
 * files). Callers only read a Synthesized, so one per configuration serves them all. Bundled
 * synths write to an outdir and are never shared.
 */
const synthesized = new Map<string, Synthesized>();

export const synthServiceStack = (options: SynthOptions = {}): Synthesized => {
  if (options.bundle || options.outdir !== undefined) return synthesize(options);
  // A prop named as undefined configures otherwise than one left out (the alarm defaults below).
  const named = Object.entries(options.props ?? {}).map(([k, v]) => [
    k,
    v === undefined ? { undefined: true } : v,
  ]);
  const key = String(stringify(Object.fromEntries(named)));
  let s = synthesized.get(key);
  if (!s) {
    s = synthesize(options);
    synthesized.set(key, s);
  }
  return s;
};

const synthesize = (options: SynthOptions): Synthesized => {
  const app = new App({
    outdir: options.outdir,
    context: {
      ...cdkJsonContext(),
      // As the CLI does: each function's template entry names its asset directory.
      'aws:cdk:enable-asset-metadata': true,
      // An empty list means no stack is bundled: NodejsFunction and the layer skip their builds.
      ...(options.bundle ? {} : { 'aws:cdk:bundling-stacks': [] }),
    },
  });
  const props = options.props ?? {};
  // Tests that are not about alarms synthesize without a destination, as a throwaway stack would;
  // a test that names any of the three (even as undefined) gets exactly what it names.
  const alarmDefaults: ServiceAppProps =
    'alarms' in props || 'alarmEmail' in props || 'alarmTopicArn' in props ? {} : { alarms: 'none' };
  const { service: stack, edge } = createServiceStacks(app, 'PdfRenderServiceTest', {
    env: { account: '123456789012', region: 'eu-west-1' },
    ...alarmDefaults,
    ...props,
  });
  const nag = new AwsSolutionsChecks(app).validateScope(app);
  const assembly = app.synth();
  return {
    stack,
    template: Template.fromStack(stack),
    edgeStack: edge,
    edgeTemplate: edge ? Template.fromStack(edge) : undefined,
    assembly,
    nagFindings: nag.violations.map((v) => ({
      rule: v.ruleName,
      severity: v.severity ?? 'error',
      paths: v.violatingResources.map((r) => r.constructPath ?? '?'),
    })),
    logicalId: (construct) => {
      const element = (construct.node.defaultChild ?? construct) as CfnElement;
      return Stack.of(construct).resolve(element.logicalId) as string;
    },
  };
};
