/**
 * Running it for a year: the API on its own name (custom domain, TLS 1.2+, the execute-api
 * endpoint off), the dashboard's page allowed to reach exactly the API's and the PDF bucket's
 * hosts, Cognito mail through SES, one AwsCliLayer, and a synth that says which account and region
 * it targets when none is configured.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { stackPropsFromContext } from '../../lib/context-props.js';
import { type Synthesized, synthServiceStack } from '../helpers/cdk-synth.js';

// biome-ignore lint/suspicious/noExplicitAny: CloudFormation JSON is inspected by the assertions
type Json = any;

const CERT_ARN = 'arn:aws:acm:eu-west-1:123456789012:certificate/11111111-2222-3333-4444-555555555555';
const only = (s: Synthesized, type: string): Json => {
  const all = Object.values(s.template.findResources(type));
  expect(all).toHaveLength(1);
  return all[0];
};

describe('with a custom domain and an existing certificate', () => {
  let s: Synthesized;
  beforeAll(() => {
    s = synthServiceStack({
      props: { customDomain: { domainName: 'pdf.example.com', certificateArn: CERT_ARN } },
    });
  });

  it('has an API Gateway custom domain with a TLS 1.2 policy, mapped to the stage', () => {
    expect(only(s, 'AWS::ApiGatewayV2::DomainName').Properties).toMatchObject({
      DomainName: 'pdf.example.com',
      DomainNameConfigurations: [
        { CertificateArn: CERT_ARN, EndpointType: 'REGIONAL', SecurityPolicy: 'TLS_1_2' },
      ],
    });
    expect(only(s, 'AWS::ApiGatewayV2::ApiMapping').Properties).toMatchObject({
      ApiId: { Ref: s.logicalId(s.stack.api.httpApi) },
      Stage: '$default',
    });
    s.template.resourceCountIs('AWS::CertificateManager::Certificate', 0);
  });

  it('turns the default execute-api endpoint off', () => {
    expect(only(s, 'AWS::ApiGatewayV2::Api').Properties.DisableExecuteApiEndpoint).toBe(true);
  });

  it('gives the custom URL in the outputs and the dashboard config, and where to point a CNAME', () => {
    const outputs = s.template.findOutputs('*');
    expect(outputs.ApiUrl?.Value).toBe('https://pdf.example.com/');
    expect(outputs.ApiKeysUrl?.Value).toBe('https://pdf.example.com/v1/api-keys');
    expect(outputs.ApiDomainTarget?.Value).toEqual({
      'Fn::GetAtt': [s.logicalId(s.stack.apiDomain?.domainName as never), 'RegionalDomainName'],
    });
    expect(s.stack.apiUrl).toBe('https://pdf.example.com/');
  });

  it('passes cdk-nag AwsSolutions', () => {
    expect(s.nagFindings).toEqual([]);
  });
});

describe('with a custom domain in a Route 53 zone', () => {
  it('makes a DNS-validated certificate and alias records, and passes cdk-nag', () => {
    const s = synthServiceStack({
      props: {
        customDomain: {
          domainName: 'pdf.example.com',
          hostedZone: { hostedZoneId: 'Z0123456789ABCDEFGHIJ', zoneName: 'example.com' },
        },
      },
    });
    expect(only(s, 'AWS::CertificateManager::Certificate').Properties).toMatchObject({
      DomainName: 'pdf.example.com',
      ValidationMethod: 'DNS',
      DomainValidationOptions: [{ DomainName: 'pdf.example.com', HostedZoneId: 'Z0123456789ABCDEFGHIJ' }],
    });
    for (const type of ['A', 'AAAA']) {
      s.template.hasResourceProperties('AWS::Route53::RecordSet', {
        Name: 'pdf.example.com.',
        Type: type,
        HostedZoneId: 'Z0123456789ABCDEFGHIJ',
        AliasTarget: Match.objectLike({ DNSName: Match.anyValue() }),
      });
    }
    expect(s.nagFindings).toEqual([]);
  });

  it('refuses a name outside the zone, a domain without a certificate, and a name that is not a host', () => {
    const zone = { hostedZoneId: 'Z0123456789ABCDEFGHIJ', zoneName: 'example.com' };
    expect(() =>
      synthServiceStack({ props: { customDomain: { domainName: 'pdf.example.org', hostedZone: zone } } }),
    ).toThrow(/not in the hosted zone/);
    expect(() => synthServiceStack({ props: { customDomain: { domainName: 'pdf.example.com' } } })).toThrow(
      /certificateArn .*hostedZone/,
    );
    expect(() =>
      synthServiceStack({
        props: { customDomain: { domainName: 'https://pdf.example.com', certificateArn: CERT_ARN } },
      }),
    ).toThrow(/host name/);
  });

  it('is read from context: domainName with certificateArn, or with hostedZoneId and hostedZoneName', () => {
    const read = (context: Record<string, string>) => stackPropsFromContext(new App({ context }).node);
    expect(read({ domainName: 'pdf.example.com', certificateArn: CERT_ARN }).customDomain).toEqual({
      domainName: 'pdf.example.com',
      certificateArn: CERT_ARN,
      hostedZone: undefined,
    });
    expect(
      read({ domainName: 'pdf.example.com', hostedZoneId: 'Z1', hostedZoneName: 'example.com' }).customDomain
        ?.hostedZone,
    ).toEqual({ hostedZoneId: 'Z1', zoneName: 'example.com' });
    expect(() => read({ hostedZoneId: 'Z1' })).toThrow(/hostedZoneName/);
    expect(() => read({ certificateArn: CERT_ARN })).toThrow(/domainName/);
  });
});

describe('with waf and a custom domain', () => {
  it('points the us-east-1 distribution at the custom domain (no cross-region reference), the data staying put', () => {
    const s = synthServiceStack({
      props: { waf: true, customDomain: { domainName: 'pdf.example.com', certificateArn: CERT_ARN } },
    });
    const [distribution] = Object.values(
      s.edgeTemplate?.findResources('AWS::CloudFront::Distribution') ?? {},
    );
    expect((distribution as Json).Properties.DistributionConfig.Origins[0].DomainName).toBe(
      'pdf.example.com',
    );
    expect(s.stack.region).toBe('eu-west-1');
    expect(s.edgeStack?.region).toBe('us-east-1');
    s.template.resourceCountIs('AWS::DynamoDB::Table', 1);
    expect(s.nagFindings).toEqual([]);
  });
});

describe('the dashboard page, the deployment handler, Cognito mail and the target environment', () => {
  let s: Synthesized;
  beforeAll(() => {
    s = synthServiceStack();
  });

  it("writes index.html with a second CSP naming exactly the API's host, the PDF bucket's and the Cognito domain", () => {
    const deployments = Object.values(s.template.findResources('Custom::CDKBucketDeployment')) as Json[];
    const pages = deployments.find((d) =>
      d.Properties.SourceMarkers?.some((m: Json) => Object.keys(m).length > 0),
    );
    expect(pages).toBeDefined();
    // Source.data: the page's text is an asset whose tokens are markers, filled in at deploy time.
    const markers = (pages as Json).Properties.SourceMarkers as Json[];
    const keys = (pages as Json).Properties.SourceObjectKeys as Json[];
    // The site, config.json, then the pages with the exact hosts (the later sources win): the one
    // that stages index.html.
    const assetDir = (key: Json) => join(s.assembly.directory, `asset.${String(key).replace(/\.zip$/, '')}`);
    const htmlIndex = keys.findLastIndex((k) => existsSync(join(assetDir(k), 'index.html')));
    expect(htmlIndex).toBeGreaterThan(0);
    expect(Object.keys(markers[htmlIndex] ?? {})).not.toHaveLength(0);
    const staged = readFileSync(join(assetDir(keys[htmlIndex]), 'index.html'), 'utf8');
    const meta = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(staged)?.[1] ?? '';
    // No host pattern: the API's own execute-api host, the bucket's regional host, this pool's domain.
    expect(meta).toMatch(
      /^connect-src 'self' https:\/\/<<marker:[^ >]+>>\.execute-api\.eu-west-1\.<<marker:[^ >]+>> https:\/\/<<marker:[^ >]+>> https:\/\/<<marker:[^ >]+>>\.auth\.eu-west-1\.amazoncognito\.com$/,
    );
    expect(meta).not.toContain('*');
    const values = JSON.stringify(s.stack.resolve(markers[htmlIndex]));
    // The API's id and the PDF bucket's regional name fill them.
    expect(values).toContain(s.logicalId(s.stack.api.httpApi));
    expect(values).toContain(s.logicalId(s.stack.pdfBucket.bucket));
    expect(values).toContain('RegionalDomainName');
  });

  it('deploys one AwsCliLayer for the two site deployments, beside the Chromium layer', () => {
    s.template.resourceCountIs('AWS::Lambda::LayerVersion', 2);
    s.template.resourceCountIs('Custom::CDKBucketDeployment', 2);
  });

  it("keeps every log group 30 days, the deployment handler's included (CDK's default is 731)", () => {
    const groups = Object.values(s.template.findResources('AWS::Logs::LogGroup')) as Json[];
    expect(groups.length).toBeGreaterThanOrEqual(9);
    for (const g of groups) expect(g.Properties.RetentionInDays).toBe(30);
  });

  it("sends Cognito's mail through SES when cognitoEmail is given", () => {
    const withSes = synthServiceStack({
      props: { cognitoEmail: { fromEmail: 'no-reply@example.com', fromName: 'PDF service' } },
    });
    expect(only(withSes, 'AWS::Cognito::UserPool').Properties.EmailConfiguration).toMatchObject({
      EmailSendingAccount: 'DEVELOPER',
      From: 'PDF service <no-reply@example.com>',
      SourceArn: 'arn:aws:ses:eu-west-1:123456789012:identity/no-reply@example.com',
    });
    expect(only(s, 'AWS::Cognito::UserPool').Properties.EmailConfiguration).toBeUndefined();
    expect(withSes.nagFindings).toEqual([]);
  });

  it('warns which account and region synth targets when none is configured, and not otherwise', () => {
    const unconfigured = synthServiceStack({ props: { env: {} } });
    Annotations.fromStack(unconfigured.stack).hasWarning(
      '*',
      Match.stringLikeRegexp('Synth targets no account and no region.*AWS_REGION'),
    );
    expect(Annotations.fromStack(s.stack).findWarning('*', Match.stringLikeRegexp('Synth targets'))).toEqual(
      [],
    );
  });
});
