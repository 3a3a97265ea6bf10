/**
 * The edge sheds load before it costs money: the stage's throttle, the renderer's reserved
 * concurrency, the optional CloudFront distribution with its WAF rate-based rule, and alarms that
 * notify one topic. Each configuration is synthesized as `cdk synth` does it, cdk-nag included.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AllowedMethods, CachePolicy, OriginRequestPolicy } from 'aws-cdk-lib/aws-cloudfront';
import { beforeAll, describe, expect, it } from 'vitest';
import { ApiEdge, CLOUDFRONT_WAF_REGION, DEFAULT_REQUESTS_PER_5_MINUTES_PER_IP } from '../../lib/api-edge.js';
import { DEFAULT_RENDERER_RESERVED_CONCURRENCY } from '../../lib/renderer-function.js';
import { DEFAULT_API_THROTTLE } from '../../lib/service-api.js';
import type { ServiceAppProps } from '../../lib/service-app.js';
import { type Synthesized, synthServiceStack } from '../helpers/cdk-synth.js';

// biome-ignore lint/suspicious/noExplicitAny: CloudFormation JSON is inspected by the assertions
type Json = any;

const ACCOUNT = '123456789012';
const TOPIC_ARN = `arn:aws:sns:eu-west-1:${ACCOUNT}:ops-alarms`;

const resourcesOf = (s: Synthesized, type: string): Json[] => Object.values(s.template.findResources(type));
const stageThrottle = (s: Synthesized) => {
  const [stage] = resourcesOf(s, 'AWS::ApiGatewayV2::Stage');
  return stage.Properties.DefaultRouteSettings;
};
/** Reserved concurrency by function logical id, for the functions that have one. */
const reservedConcurrency = (s: Synthesized): Record<string, number> =>
  Object.fromEntries(
    Object.entries(s.template.findResources('AWS::Lambda::Function'))
      .filter(([, fn]) => fn.Properties.ReservedConcurrentExecutions !== undefined)
      .map(([id, fn]) => [id, fn.Properties.ReservedConcurrentExecutions]),
  );
const alarmActions = (s: Synthesized): Json[] =>
  resourcesOf(s, 'AWS::CloudWatch::Alarm').map((a) => a.Properties.AlarmActions);

describe('the default stack', () => {
  let s: Synthesized;
  beforeAll(() => {
    s = synthServiceStack();
  });

  it('throttles the stage at 50 requests a second with bursts of 100', () => {
    expect(DEFAULT_API_THROTTLE).toEqual({ rateLimit: 50, burstLimit: 100 });
    expect(stageThrottle(s)).toEqual({ ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 });
  });

  it('reserves 20 concurrent executions for the renderer, and for no other function', () => {
    expect(DEFAULT_RENDERER_RESERVED_CONCURRENCY).toBe(20);
    expect(reservedConcurrency(s)).toEqual({ [s.logicalId(s.stack.renderer.function)]: 20 });
  });

  it("has no distribution but the dashboard's, no web ACL and no topic; with alarms=none its alarms notify nobody", () => {
    s.template.resourceCountIs('AWS::CloudFront::Distribution', 1);
    expect(Object.keys(s.template.findResources('AWS::CloudFront::Distribution'))).toEqual([
      s.logicalId(s.stack.dashboard?.distribution as never),
    ]);
    for (const type of ['AWS::WAFv2::WebACL', 'AWS::SNS::Topic', 'AWS::KMS::Key']) {
      s.template.resourceCountIs(type, 0);
    }
    expect(s.template.findOutputs('DistributionUrl')).toEqual({});
    // Every alarm, however many the stack has, notifies nobody.
    expect(alarmActions(s).length).toBeGreaterThan(0);
    expect(new Set(alarmActions(s))).toEqual(new Set([undefined]));
  });

  it("alarms when more than 5% of at least 20 of the stage's requests answer 5xx", () => {
    const stageDimensions = [
      { Name: 'ApiId', Value: { Ref: s.logicalId(s.stack.api.httpApi) } },
      { Name: 'Stage', Value: '$default' },
    ];
    s.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Threshold: 5,
      ComparisonOperator: 'GreaterThanThreshold',
      Metrics: Match.arrayWith([
        Match.objectLike({ Expression: 'IF(requests >= 20, 100 * errors / requests, 0)' }),
        Match.objectLike({
          Id: 'errors',
          MetricStat: Match.objectLike({
            Metric: { Namespace: 'AWS/ApiGateway', MetricName: '5xx', Dimensions: stageDimensions },
          }),
        }),
        Match.objectLike({
          Id: 'requests',
          MetricStat: Match.objectLike({
            Metric: { Namespace: 'AWS/ApiGateway', MetricName: 'Count', Dimensions: stageDimensions },
          }),
        }),
      ]),
    });
  });

  it('passes cdk-nag AwsSolutions', () => {
    expect(s.nagFindings).toEqual([]);
  });
});

describe('throttle and concurrency overridden', () => {
  it('uses the given stage throttle and reserved concurrency', () => {
    const s = synthServiceStack({
      props: { apiThrottle: { rateLimit: 5, burstLimit: 10 }, rendererReservedConcurrency: 50 },
    });
    expect(stageThrottle(s)).toEqual({ ThrottlingRateLimit: 5, ThrottlingBurstLimit: 10 });
    expect(reservedConcurrency(s)).toEqual({ [s.logicalId(s.stack.renderer.function)]: 50 });
    expect(s.nagFindings).toEqual([]);
  });

  it('reserves nothing when reserved concurrency is off', () => {
    const s = synthServiceStack({ props: { rendererReservedConcurrency: false } });
    expect(reservedConcurrency(s)).toEqual({});
    expect(s.nagFindings).toEqual([]);
  });

  it('keeps no environment warm by default, and rendererProvisionedConcurrency on a live alias the pdf function invokes', () => {
    const none = synthServiceStack({});
    expect(Object.keys(none.template.findResources('AWS::Lambda::Alias'))).toEqual([]);
    const s = synthServiceStack({ props: { rendererProvisionedConcurrency: 2 } });
    const aliases = Object.values(s.template.findResources('AWS::Lambda::Alias'));
    expect(aliases).toHaveLength(1);
    expect(aliases[0]?.Properties).toMatchObject({
      Name: 'live',
      FunctionName: { Ref: s.logicalId(s.stack.renderer.function) },
      ProvisionedConcurrencyConfig: { ProvisionedConcurrentExecutions: 2 },
    });
    // The pdf function names the alias, and may invoke it: the unqualified function has no warm environments.
    const aliasId = Object.keys(s.template.findResources('AWS::Lambda::Alias'))[0] as string;
    const renderers = Object.values(s.template.findResources('AWS::Lambda::Function')).map(
      (fn) => (fn.Properties.Environment?.Variables ?? {}).RENDERER_FUNCTION_NAME,
    );
    // The alias's name: the function's, qualified with `:live`.
    const rendererId = s.logicalId(s.stack.renderer.function);
    const live = renderers.filter((r) => JSON.stringify(r ?? '').endsWith('":live"]]}'));
    expect(live.length).toBeGreaterThan(0);
    for (const r of live) expect(JSON.stringify(r)).toContain(aliasId);
    expect(renderers).not.toContainEqual({ Ref: rendererId });
    const invokes = JSON.stringify(
      Object.values(s.template.findResources('AWS::IAM::Policy')).map((p) => p.Properties.PolicyDocument),
    );
    expect(invokes).toContain(aliasId);
    expect(s.nagFindings).toEqual([]);
  });

  it.each<[ServiceAppProps, RegExp]>([
    [{ apiThrottle: { rateLimit: 0, burstLimit: 10 } }, /apiThrottle/],
    [{ apiThrottle: { rateLimit: 5, burstLimit: 2.5 } }, /apiThrottle/],
    [{ apiThrottle: { rateLimit: 5 } as never }, /apiThrottle/],
    [{ rendererReservedConcurrency: 0 }, /rendererReservedConcurrency/],
    [{ rendererReservedConcurrency: 1.5 }, /rendererReservedConcurrency/],
    [{ rendererProvisionedConcurrency: -1 }, /rendererProvisionedConcurrency/],
    [{ rendererProvisionedConcurrency: 1.5 }, /rendererProvisionedConcurrency/],
    [{ rendererProvisionedConcurrency: 21 }, /cannot exceed the renderer's reserved concurrency \(20\)/],
    [{ alarmEmail: 'ops at example.com' }, /alarmEmail/],
    [{ waf: { requestsPer5MinutesPerIp: 9 } }, /requestsPer5MinutesPerIp/],
  ])('refuses %j at synth', (props, message) => {
    expect(() =>
      synthServiceStack({ props: { ...props, env: { account: ACCOUNT, region: CLOUDFRONT_WAF_REGION } } }),
    ).toThrow(message);
  });
});

describe.each([
  ['eu-west-1', 'the service stays in eu-west-1'],
  [CLOUDFRONT_WAF_REGION, 'the service in us-east-1 too'],
])('with waf, the service in %s: the edge in its own us-east-1 stack', (region) => {
  let s: Synthesized;
  let edge: ApiEdge;
  let edgeTemplate: Template;
  beforeAll(() => {
    s = synthServiceStack({ props: { waf: true, env: { account: ACCOUNT, region } } });
    edge = s.edgeStack?.edge as ApiEdge;
    edgeTemplate = s.edgeTemplate as Template;
  });

  it('keeps the table and the buckets in the chosen region, and the distribution and web ACL in us-east-1', () => {
    expect(s.stack.region).toBe(region);
    expect(s.edgeStack?.region).toBe(CLOUDFRONT_WAF_REGION);
    s.template.resourceCountIs('AWS::DynamoDB::Table', 1);
    expect(Object.keys(s.template.findResources('AWS::S3::Bucket')).length).toBeGreaterThanOrEqual(2);
    s.template.resourceCountIs('AWS::WAFv2::WebACL', 0);
    edgeTemplate.resourceCountIs('AWS::WAFv2::WebACL', 1);
    edgeTemplate.resourceCountIs('AWS::CloudFront::Distribution', 1);
    edgeTemplate.resourceCountIs('AWS::DynamoDB::Table', 0);
  });

  it('has a CLOUDFRONT web ACL whose only rule limits each client IP, answering 429 with the error body', () => {
    const [acl] = Object.values(edgeTemplate.findResources('AWS::WAFv2::WebACL')) as Json[];
    expect(acl.Properties).toMatchObject({ Scope: 'CLOUDFRONT', DefaultAction: { Allow: {} } });
    expect(acl.Properties.Rules).toHaveLength(1);
    const [rule] = acl.Properties.Rules;
    expect(rule.Statement).toEqual({
      RateBasedStatement: {
        AggregateKeyType: 'IP',
        Limit: DEFAULT_REQUESTS_PER_5_MINUTES_PER_IP,
        EvaluationWindowSec: 300,
      },
    });
    expect(rule.Action.Block.CustomResponse.ResponseCode).toBe(429);
    const body = acl.Properties.CustomResponseBodies[rule.Action.Block.CustomResponse.CustomResponseBodyKey];
    expect(body.ContentType).toBe('APPLICATION_JSON');
    expect(JSON.parse(body.Content)).toEqual({
      error: { code: 'USAGE_LIMIT_EXCEEDED', message: expect.any(String) },
    });
    // No managed rule group: the common rule set would block the API's large HTML bodies.
    expect(JSON.stringify(acl.Properties)).not.toContain('ManagedRuleGroupStatement');
  });

  it('puts the web ACL on a distribution that passes every request through to the API over HTTPS', () => {
    const distribution = edgeTemplate.findResources('AWS::CloudFront::Distribution')[
      s.logicalId(edge.distribution)
    ];
    const config = distribution?.Properties.DistributionConfig;
    expect(config.WebACLId).toEqual({ 'Fn::GetAtt': [s.logicalId(edge.webAcl), 'Arn'] });
    expect(config.DefaultCacheBehavior).toMatchObject({
      ViewerProtocolPolicy: 'https-only',
      CachePolicyId: CachePolicy.CACHING_DISABLED.cachePolicyId,
      OriginRequestPolicyId: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER.originRequestPolicyId,
    });
    expect(config.DefaultCacheBehavior.AllowedMethods.sort()).toEqual(
      [...AllowedMethods.ALLOW_ALL.methods].sort(),
    );
    expect(config.CacheBehaviors).toBeUndefined();
    expect(config.Origins).toEqual([
      expect.objectContaining({
        // The API's id, read from the service stack's outputs in its own region at deploy time.
        DomainName: {
          'Fn::Join': [
            '',
            [
              {
                'Fn::GetStackOutput': {
                  StackName: s.stack.stackName,
                  Region: region,
                  OutputName: expect.stringContaining(s.logicalId(s.stack.api.httpApi)),
                },
              },
              `.execute-api.${region}.`,
              { Ref: 'AWS::URLSuffix' },
            ],
          ],
        },
        CustomOriginConfig: expect.objectContaining({
          OriginProtocolPolicy: 'https-only',
          OriginSSLProtocols: ['TLSv1.2'],
        }),
      }),
    ]);
    // Past API Gateway's own 30 s, so its answer arrives rather than a CloudFront 504.
    expect(config.Origins[0].CustomOriginConfig.OriginReadTimeout).toBeGreaterThan(30);
    expect(config.Logging.Bucket).toEqual({
      'Fn::GetAtt': [s.logicalId(edge.logBucket), 'RegionalDomainName'],
    });
  });

  it("outputs the distribution's URL from the edge stack, the API's own from the service stack", () => {
    expect(edgeTemplate.findOutputs('*').DistributionUrl?.Value).toEqual({
      'Fn::Join': ['', ['https://', { 'Fn::GetAtt': [s.logicalId(edge.distribution), 'DomainName'] }, '/']],
    });
    expect(s.template.findOutputs('*').ApiUrl).toBeDefined();
  });

  it('keeps the default throttle and reserved concurrency', () => {
    expect(stageThrottle(s)).toEqual({ ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 });
    expect(Object.values(reservedConcurrency(s))).toEqual([20]);
  });

  it('passes cdk-nag AwsSolutions', () => {
    expect(s.nagFindings).toEqual([]);
  });
});

describe('the web ACL and its region', () => {
  const edgeIn = (region: string | undefined, props: { requestsPer5MinutesPerIp?: number } = {}) => {
    const stack = new Stack(new App(), 'Edge', region ? { env: { account: ACCOUNT, region } } : {});
    new ApiEdge(stack, 'Edge', { originDomainName: 'pdf.example.com', ...props });
    return Template.fromStack(stack);
  };

  it('takes another rate', () => {
    edgeIn(CLOUDFRONT_WAF_REGION, { requestsPer5MinutesPerIp: 500 }).hasResourceProperties(
      'AWS::WAFv2::WebACL',
      {
        Rules: [Match.objectLike({ Statement: { RateBasedStatement: Match.objectLike({ Limit: 500 }) } })],
      },
    );
  });

  it('fails synth, naming us-east-1, when its stack deploys to another region', () => {
    expect(() => edgeIn('eu-west-1')).toThrow(/us-east-1.*eu-west-1/);
  });

  it("with waf and the service's region unknown at synth, fails saying how to give it", () => {
    expect(() => synthServiceStack({ props: { waf: true, env: { account: ACCOUNT } } })).toThrow(
      /waf: .*region at synth time/,
    );
  });

  it('leaves the check to CloudFormation when the region is unknown at synth time', () => {
    const regionCheck = {
      Assert: { 'Fn::Equals': [{ Ref: 'AWS::Region' }, 'us-east-1'] },
      AssertDescription: expect.stringMatching(/us-east-1/),
    };
    const assertionsOf = (t: Template): Json[] =>
      Object.values((t.toJSON().Rules ?? {}) as Record<string, Json>).flatMap((r) => r.Assertions);
    expect(assertionsOf(edgeIn(undefined))).toContainEqual(regionCheck);
    expect(assertionsOf(edgeIn(CLOUDFRONT_WAF_REGION))).not.toContainEqual(regionCheck);
  });
});

describe('alarm notifications', () => {
  it('with alarmEmail: one encrypted, TLS-only topic that CloudWatch may publish to, the address subscribed, every alarm notifying it', () => {
    const s = synthServiceStack({ props: { alarmEmail: 'ops@example.com' } });
    const topics: [string, Json][] = Object.entries(s.template.findResources('AWS::SNS::Topic'));
    expect(topics).toHaveLength(1);
    const [topicId, topic] = topics[0] as [string, Json];
    s.template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'ops@example.com',
      TopicArn: { Ref: topicId },
    });
    const actions = alarmActions(s);
    expect(actions.length).toBeGreaterThanOrEqual(3);
    for (const a of actions) expect(a).toEqual([{ Ref: topicId }]);

    // Encrypted with a rotated key that CloudWatch may use: without that grant, notifications drop.
    const keyId = topic.Properties.KmsMasterKeyId['Fn::GetAtt'][0];
    const key: Json = s.template.findResources('AWS::KMS::Key')[keyId];
    expect(key.Properties.EnableKeyRotation).toBe(true);
    expect(key.Properties.KeyPolicy.Statement).toContainEqual({
      Effect: 'Allow',
      Principal: { Service: 'cloudwatch.amazonaws.com' },
      Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
      Resource: '*',
    });
    const [policy] = resourcesOf(s, 'AWS::SNS::TopicPolicy');
    expect(policy.Properties.Topics).toEqual([{ Ref: topicId }]);
    expect(policy.Properties.PolicyDocument.Statement).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          Effect: 'Deny',
          Action: 'sns:Publish',
          Condition: { Bool: { 'aws:SecureTransport': 'false' } },
        }),
        expect.objectContaining({
          Effect: 'Allow',
          Action: 'sns:Publish',
          Principal: { Service: 'cloudwatch.amazonaws.com' },
          Condition: { ArnLike: { 'aws:SourceArn': `arn:aws:cloudwatch:eu-west-1:${ACCOUNT}:alarm:*` } },
        }),
      ]),
    );
    expect(s.nagFindings).toEqual([]);
  });

  it('with alarmTopicArn and alarmEmail: no new topic; the address subscribes to the given one, which every alarm notifies', () => {
    const s = synthServiceStack({ props: { alarmTopicArn: TOPIC_ARN, alarmEmail: 'ops@example.com' } });
    s.template.resourceCountIs('AWS::SNS::Topic', 0);
    s.template.resourceCountIs('AWS::KMS::Key', 0);
    s.template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'ops@example.com',
      TopicArn: TOPIC_ARN,
    });
    for (const a of alarmActions(s)) expect(a).toEqual([TOPIC_ARN]);
    expect(s.nagFindings).toEqual([]);
  });

  it('with alarmTopicArn alone: every alarm notifies it, nothing subscribes', () => {
    const s = synthServiceStack({ props: { alarmTopicArn: TOPIC_ARN } });
    s.template.resourceCountIs('AWS::SNS::Subscription', 0);
    const actions = alarmActions(s);
    expect(actions.length).toBeGreaterThanOrEqual(3);
    for (const a of actions) expect(a).toEqual([TOPIC_ARN]);
  });
});
