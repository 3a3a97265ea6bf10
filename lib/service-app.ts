/**
 * The app's stacks: the service stack in the chosen region and, with `waf`, the edge stack
 * (CloudFront and AWS WAF) in us-east-1, which CloudFront's web ACLs require. The data never
 * moves for the edge: the table and buckets stay in the service stack's region. bin/app.ts and
 * the tests build the app through this one function.
 */
import { Annotations, type App, Token } from 'aws-cdk-lib';
import { CLOUDFRONT_WAF_REGION, type WafSettings } from './api-edge.js';
import { PdfServiceEdgeStack } from './edge-stack.js';
import { PdfServiceStack, type PdfServiceStackProps } from './service-stack.js';

export interface ServiceAppProps extends PdfServiceStackProps {
  /**
   * A CloudFront distribution in front of the API with an AWS WAF web ACL that limits requests per
   * client IP: `true` for the defaults, or the settings. It is its own stack (`<stackName>-edge`)
   * in us-east-1; the service stack stays in its region. The API's own host stays reachable
   * directly (lib/api-edge.ts).
   * @default false: no distribution, no web ACL
   */
  readonly waf?: boolean | WafSettings;
}

export interface ServiceStacks {
  readonly service: PdfServiceStack;
  readonly edge?: PdfServiceEdgeStack;
}

export const createServiceStacks = (app: App, stackName: string, props: ServiceAppProps): ServiceStacks => {
  const { waf, ...serviceProps } = props;
  const region = props.env?.region;
  const regionKnown = region !== undefined && !Token.isUnresolved(region);
  // Only the execute-api host is a deploy-time value (read across regions with Fn::GetStackOutput,
  // cdk.json's @aws-cdk/core:defaultCrossStackReferences "weak"); a custom domain is a plain name.
  const crossRegion = Boolean(waf) && !props.customDomain && region !== CLOUDFRONT_WAF_REGION;
  if (crossRegion && !regionKnown) {
    throw new Error(
      `waf: the edge stack is made in ${CLOUDFRONT_WAF_REGION} and refers to the API across regions, which needs ` +
        "the service stack's region at synth time: set AWS_REGION (or CDK_DEFAULT_REGION, or a profile with a " +
        'region), or give the API a customDomain',
    );
  }
  const service = new PdfServiceStack(app, stackName, serviceProps);
  const unconfigured = [
    Token.isUnresolved(service.account) ? 'account' : undefined,
    Token.isUnresolved(service.region) ? 'region' : undefined,
  ].filter((x) => x !== undefined);
  if (unconfigured.length > 0) {
    const target = (value: string, what: string) =>
      Token.isUnresolved(value) ? `no ${what}` : `${what} ${value}`;
    Annotations.of(service).addWarningV2(
      'pdf-service:unconfigured-environment',
      `Synth targets ${target(service.account, 'account')} and ${target(service.region, 'region')}: no ` +
        `${unconfigured.join(' or ')} is configured, so \`cdk deploy\` uses whatever your AWS credentials and ` +
        'profile resolve to (the CLI falls back to us-east-1 when nothing names a region). Choose with AWS_PROFILE ' +
        'or AWS_REGION, or CDK_DEFAULT_ACCOUNT and CDK_DEFAULT_REGION.',
    );
  }
  if (!waf) return { service };
  const edge = new PdfServiceEdgeStack(app, `${stackName}-edge`, {
    description: 'PDF render service: CloudFront and AWS WAF in front of the API',
    env: { account: props.env?.account },
    originDomainName: service.apiHost,
    ...(waf === true ? {} : waf),
    logRemovalPolicy: service.logRemovalPolicy,
  });
  return { service, edge };
};
