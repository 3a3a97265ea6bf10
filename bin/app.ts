/**
 * The CDK app: `npx cdk deploy` (after `npx cdk bootstrap`). Settings come from CDK context, in
 * cdk.json or on the command line (`-c renderBudgetMs=20000`, `-c plans='{"free":…}'`); see
 * docs/deploy.md. Every synth runs cdk-nag's AwsSolutions checks: an unacknowledged finding is an
 * error and fails the synth.
 */
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { PdfServiceStack, type PdfServiceStackProps } from '../lib/service-stack.js';

const app = new App();

/** A context value: objects from cdk.json as they are, strings from `-c` parsed as JSON when they are JSON. */
const context = <T>(key: string): T | undefined => {
  const value: unknown = app.node.tryGetContext(key);
  if (typeof value !== 'string') return value as T | undefined;
  try {
    return JSON.parse(value) as T;
  } catch {
    return value as T;
  }
};

const userPoolId = context<string>('existingUserPoolId');
const userPoolClientId = context<string>('existingUserPoolClientId');
if ((userPoolId === undefined) !== (userPoolClientId === undefined)) {
  throw new Error('context: existingUserPoolId and existingUserPoolClientId go together');
}

const props: PdfServiceStackProps = {
  description: 'PDF render service: HTML+CSS to PDF behind an HTTP API',
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
  plans: context('plans'),
  limits: context('limits'),
  renderBudgetMs: context('renderBudgetMs'),
  downloadUrlTtlSeconds: context('downloadUrlTtlSeconds'),
  pdfRetentionDays: context('pdfRetentionDays'),
  retainData: context('retainData'),
  rendererMemorySizeMiB: context('rendererMemorySizeMiB'),
  alarmTopicArn: context('alarmTopicArn'),
  apiThrottle: context('apiThrottle'),
  existingUserPool: userPoolId && userPoolClientId ? { userPoolId, userPoolClientId } : undefined,
};

new PdfServiceStack(app, context<string>('stackName') ?? 'PdfRenderService', props);
Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
