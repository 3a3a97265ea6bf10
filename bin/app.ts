/**
 * The CDK app: `npx cdk deploy --all` (after `npx cdk bootstrap`). Settings come from CDK context,
 * in cdk.json or on the command line (`-c alarmEmail=ops@example.com`); see lib/context-props.ts
 * and docs/deploy.md. The service stack deploys to the configured region; with `waf`, a second
 * stack (CloudFront and AWS WAF) deploys to us-east-1 (lib/service-app.ts). Every synth runs
 * cdk-nag's AwsSolutions checks: any finding that is not acknowledged (with its reason, in the
 * construct that causes it) fails the synth.
 */
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { ContextError, stackNameFromContext, stackPropsFromContext } from '../lib/context-props.js';
import { createServiceStacks } from '../lib/service-app.js';
import { ServiceSettingsError } from '../lib/service-settings.js';
import { AlarmDestinationError } from '../lib/service-stack.js';

const app = new App();
try {
  createServiceStacks(app, stackNameFromContext(app.node), {
    description: 'PDF render service: HTML+CSS to PDF behind an HTTP API',
    env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
    ...stackPropsFromContext(app.node),
  });
} catch (e) {
  // A setting the deployer must fix: its message says how; a stack trace would bury it.
  if (e instanceof AlarmDestinationError || e instanceof ContextError || e instanceof ServiceSettingsError) {
    process.stderr.write(`\n${e.message}\n\n`);
    process.exit(1);
  }
  throw e;
}
Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
