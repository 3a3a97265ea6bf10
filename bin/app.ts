/**
 * The CDK app: `npx cdk deploy` (after `npx cdk bootstrap`). Settings come from CDK context, in
 * cdk.json or on the command line (`-c renderBudgetMs=20000`); see lib/context-props.ts and
 * docs/deploy.md. Every synth runs cdk-nag's AwsSolutions checks: any finding that is not
 * acknowledged (with its reason, in the construct that causes it) fails the synth.
 */
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { stackNameFromContext, stackPropsFromContext } from '../lib/context-props.js';
import { PdfServiceStack } from '../lib/service-stack.js';

const app = new App();
new PdfServiceStack(app, stackNameFromContext(app.node), {
  description: 'PDF render service: HTML+CSS to PDF behind an HTTP API',
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
  ...stackPropsFromContext(app.node),
});
Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
