/**
 * The service's CloudFront distribution and AWS WAF web ACL (lib/api-edge.ts) in a stack of their
 * own in us-east-1, where CloudFront's web ACLs must be created, beside the service stack in
 * whatever region holds the data. When the origin is the execute-api host, the API's id crosses
 * regions as a stack output of the service stack that this stack reads with Fn::GetStackOutput
 * (cdk.json's @aws-cdk/core:defaultCrossStackReferences "weak": no custom resource, and the
 * service stack can still change it); a custom domain is a plain name and needs none. Deploy the
 * service stack first (`cdk deploy --all` orders them).
 */
import { CfnOutput, type RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { ApiEdge, CLOUDFRONT_WAF_REGION, type WafSettings } from './api-edge.js';

export interface PdfServiceEdgeStackProps extends StackProps, WafSettings {
  /** The API's host (its custom domain, or its execute-api host). */
  readonly originDomainName: string;
  /** @default RemovalPolicy.RETAIN */
  readonly logRemovalPolicy?: RemovalPolicy;
}

export class PdfServiceEdgeStack extends Stack {
  readonly edge: ApiEdge;

  constructor(scope: Construct, id: string, props: PdfServiceEdgeStackProps) {
    super(scope, id, {
      ...props,
      env: { account: props.env?.account, region: CLOUDFRONT_WAF_REGION },
    });
    const { originDomainName, requestsPer5MinutesPerIp, logRemovalPolicy } = props;
    this.edge = new ApiEdge(this, 'Edge', { originDomainName, requestsPer5MinutesPerIp, logRemovalPolicy });
    new CfnOutput(this, 'DistributionUrl', {
      value: this.edge.url,
      description:
        'Base URL of the API through CloudFront and AWS WAF (paths start with v1/): give clients this one',
    });
  }
}
