/**
 * An optional front door for the API: a CloudFront distribution with an AWS WAF web ACL that
 * blocks a client IP sending more than its share of requests before API Gateway, and so before
 * any Lambda, sees them. WAF cannot be attached to an API Gateway HTTP API (only to REST APIs,
 * CloudFront, load balancers and a few others), hence the distribution.
 *
 * The distribution is a pass-through: no caching, every method, every header but Host (which
 * API Gateway needs to be its own), the query string and the body, HTTPS only on both sides.
 * There is deliberately no AWS managed rule group: the common rule set blocks bodies over 8 KB,
 * and the API takes HTML bodies of up to 6 MiB.
 *
 * It lives in its own stack in us-east-1 (lib/edge-stack.ts), where CloudFront's web ACLs must be,
 * while the API, the table and the buckets stay in the region chosen for them. Its origin is the
 * API's custom domain when there is one, else the execute-api host. Either way the origin stays
 * reachable directly (HTTP APIs have no resource policy): the stage throttle still guards it; the
 * WAF rule guards only what comes through the distribution.
 */
import { Aws, CfnRule, Duration, Fn, RemovalPolicy, Stack, Token, Validations } from 'aws-cdk-lib';
import {
  AllowedMethods,
  CachePolicy,
  Distribution,
  HttpVersion,
  OriginProtocolPolicy,
  OriginRequestPolicy,
  OriginSslPolicy,
  ViewerProtocolPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import { HttpOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import type { Bucket } from 'aws-cdk-lib/aws-s3';
import { CfnWebACL } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import type { ErrorCode } from '../functions/domain/common/errors.js';
import { createAccessLogBucket } from './access-log-bucket.js';

/** The region where CloudFront's web ACLs (scope CLOUDFRONT) must be created. */
export const CLOUDFRONT_WAF_REGION = 'us-east-1';

/**
 * The default rate-based rule: 2,000 requests per client IP in any 5 minutes (6.7 a second
 * sustained). The busiest default plan renders 300 a minute (1,500 in 5 minutes) per account, and
 * its clients also poll jobs, so one such client stays below it; a flood from one address is cut
 * off within a minute or so (WAF counts in 5-minute windows, updated about every 30 s). Raise it
 * with the plans, or when many clients share one address (a NAT gateway).
 */
export const DEFAULT_REQUESTS_PER_5_MINUTES_PER_IP = 2000;

export interface WafSettings {
  /**
   * Requests one client IP may send in any 5 minutes; beyond it the distribution answers 429
   * with the contract's error body until the rate drops. WAF accepts 10 to 2,000,000,000.
   * @default DEFAULT_REQUESTS_PER_5_MINUTES_PER_IP (2,000)
   */
  readonly requestsPer5MinutesPerIp?: number;
}

export interface ApiEdgeProps extends WafSettings {
  /** The API's host: its custom domain, or `<apiId>.execute-api.<region>.amazonaws.com`. */
  readonly originDomainName: string;
  /**
   * Removal policy of the distribution's access-log bucket.
   * @default RemovalPolicy.RETAIN
   */
  readonly logRemovalPolicy?: RemovalPolicy;
}

const RATE_LIMITED: ErrorCode = 'USAGE_LIMIT_EXCEEDED';

export class ApiEdge extends Construct {
  readonly distribution: Distribution;
  readonly webAcl: CfnWebACL;
  readonly logBucket: Bucket;

  constructor(scope: Construct, id: string, props: ApiEdgeProps) {
    super(scope, id);
    const stack = Stack.of(this);
    if (!Token.isUnresolved(stack.region) && stack.region !== CLOUDFRONT_WAF_REGION) {
      throw new Error(
        `waf: a web ACL for CloudFront (scope CLOUDFRONT) can only be created in ${CLOUDFRONT_WAF_REGION}, ` +
          `and this stack deploys to ${stack.region}. Deploy the stack to ${CLOUDFRONT_WAF_REGION} ` +
          '(AWS_REGION=us-east-1, or a profile whose region it is) or leave waf off.',
      );
    }
    if (Token.isUnresolved(stack.region)) {
      // A stack without a region at synth time: the same check, made by CloudFormation before it
      // creates anything.
      new CfnRule(this, 'RegionRule', {
        assertions: [
          {
            assert: Fn.conditionEquals(Aws.REGION, CLOUDFRONT_WAF_REGION),
            assertDescription: `waf: a web ACL for CloudFront can only be created in ${CLOUDFRONT_WAF_REGION}; deploy the stack there or leave waf off.`,
          },
        ],
      });
    }

    const limit = props.requestsPer5MinutesPerIp ?? DEFAULT_REQUESTS_PER_5_MINUTES_PER_IP;
    if (!Number.isInteger(limit) || limit < 10 || limit > 2_000_000_000) {
      throw new Error(
        `waf.requestsPer5MinutesPerIp must be a whole number from 10 to 2,000,000,000, got ${limit}`,
      );
    }
    const visibility = (metricName: string): CfnWebACL.VisibilityConfigProperty => ({
      cloudWatchMetricsEnabled: true,
      sampledRequestsEnabled: true,
      metricName,
    });
    this.webAcl = new CfnWebACL(this, 'WebAcl', {
      scope: 'CLOUDFRONT',
      description: 'PDF render service: requests per client IP',
      defaultAction: { allow: {} },
      visibilityConfig: visibility('PdfServiceWebAcl'),
      customResponseBodies: {
        'rate-limited': {
          contentType: 'APPLICATION_JSON',
          content: JSON.stringify({
            error: {
              code: RATE_LIMITED,
              message: 'Too many requests from this address; slow down and retry in a few minutes.',
            },
          }),
        },
      },
      rules: [
        {
          name: 'requests-per-ip',
          priority: 0,
          statement: {
            rateBasedStatement: { aggregateKeyType: 'IP', limit, evaluationWindowSec: 300 },
          },
          action: { block: { customResponse: { responseCode: 429, customResponseBodyKey: 'rate-limited' } } },
          visibilityConfig: visibility('PdfServiceRequestsPerIp'),
        },
      ],
    });

    const removalPolicy = props.logRemovalPolicy ?? RemovalPolicy.RETAIN;
    this.logBucket = createAccessLogBucket(this, 'AccessLogs', {
      of: "the API distribution's",
      removalPolicy,
    });

    this.distribution = new Distribution(this, 'Distribution', {
      comment: 'PDF render service API behind AWS WAF',
      defaultBehavior: {
        origin: new HttpOrigin(props.originDomainName, {
          protocolPolicy: OriginProtocolPolicy.HTTPS_ONLY,
          originSslProtocols: [OriginSslPolicy.TLS_V1_2],
          // API Gateway ends every request at 30 s with its own answer; wait a little longer so
          // that answer, not a CloudFront 504, reaches the client.
          readTimeout: Duration.seconds(35),
        }),
        allowedMethods: AllowedMethods.ALLOW_ALL,
        viewerProtocolPolicy: ViewerProtocolPolicy.HTTPS_ONLY,
        // Every answer is per caller (and says Cache-Control: no-store). With caching disabled,
        // this policy forwards Authorization too (CloudFront refuses that only when caching).
        cachePolicy: CachePolicy.CACHING_DISABLED,
        originRequestPolicy: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
      },
      httpVersion: HttpVersion.HTTP2_AND_3,
      webAclId: this.webAcl.attrArn,
      enableLogging: true,
      logBucket: this.logBucket,
      logFilePrefix: 'cloudfront/',
    });
    Validations.of(this.distribution).acknowledge({
      id: 'AwsSolutions-CFR1',
      reason:
        'The API serves accounts wherever they are; every request authenticates, and the WAF rule limits ' +
        'each client address. A deployment that serves known countries only can add a geo restriction.',
    });
    Validations.of(this.distribution).acknowledge({
      id: 'AwsSolutions-CFR4',
      reason:
        'The distribution answers on its *.cloudfront.net name, whose default certificate CloudFront ' +
        'always offers with its TLSv1 policy; a minimum of TLS 1.2 needs a custom domain and an ACM ' +
        'certificate in us-east-1, which this stack does not manage. Viewers are HTTPS only, and ' +
        'CloudFront reaches API Gateway over TLS 1.2.',
    });
  }

  /** The URL clients call (ends with a slash). */
  get url(): string {
    return `https://${this.distribution.distributionDomainName}/`;
  }
}
