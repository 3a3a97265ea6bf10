/**
 * The dashboard in the synthesized stack: a private bucket read by CloudFront through origin access
 * control, HTTPS only, security headers (the same Content-Security-Policy the local server sends),
 * a Cognito domain with managed login and a PKCE app client whose callback and sign-out URL is the
 * distribution's, the API's CORS for that origin only, the API accepting that client's tokens, the
 * page's config.json written by the deployment from the stack's values, and cdk-nag clean.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { stackPropsFromContext } from '../../lib/context-props.js';
import { corsPolicy } from '../../lib/cors.js';
import { contentSecurityPolicyDirectives, REFERENCE_STYLE_HASHES } from '../../lib/dashboard/headers.js';
import { type Synthesized, synthServiceStack } from '../helpers/cdk-synth.js';

// biome-ignore lint/suspicious/noExplicitAny: CloudFormation JSON is inspected by the assertions
type Json = any;

const resourcesOf = (s: Synthesized, type: string): Record<string, Json> => s.template.findResources(type);
const only = (s: Synthesized, type: string): Json => {
  const all = Object.values(resourcesOf(s, type));
  expect(all, type).toHaveLength(1);
  return all[0];
};

describe('the dashboard (on by default)', () => {
  let s: Synthesized;
  let distributionId: string;
  /** `https://<distribution domain>` as the template writes it. */
  let origin: Json;

  beforeAll(() => {
    s = synthServiceStack();
    const dashboard = s.stack.dashboard;
    if (!dashboard) throw new Error('no dashboard');
    distributionId = s.logicalId(dashboard.distribution);
    origin = { 'Fn::Join': ['', ['https://', { 'Fn::GetAtt': [distributionId, 'DomainName'] }]] };
  });

  it('keeps the site in a private, encrypted, TLS-only bucket that only the distribution reads (OAC)', () => {
    const bucketId = s.logicalId(s.stack.dashboard?.bucket as never);
    s.template.hasResourceProperties('AWS::S3::Bucket', {
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
      OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
      BucketEncryption: Match.anyValue(),
    });
    const policy = Object.values(resourcesOf(s, 'AWS::S3::BucketPolicy')).find(
      (p) => p.Properties.Bucket.Ref === bucketId,
    );
    const statements: Json[] = policy.Properties.PolicyDocument.Statement;
    expect(statements).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        expect.objectContaining({
          Effect: 'Allow',
          Action: 's3:GetObject',
          Principal: { Service: 'cloudfront.amazonaws.com' },
          Condition: {
            StringEquals: {
              'AWS:SourceArn': {
                'Fn::Join': ['', expect.arrayContaining([{ Ref: distributionId }])],
              },
            },
          },
        }),
      ]),
    );
    // Nothing else may read it.
    expect(statements.filter((st) => st.Effect === 'Allow')).toHaveLength(1);
    expect(
      only(s, 'AWS::CloudFront::OriginAccessControl').Properties.OriginAccessControlConfig,
    ).toMatchObject({
      OriginAccessControlOriginType: 's3',
      SigningBehavior: 'always',
      SigningProtocol: 'sigv4',
    });
  });

  it('serves it over HTTPS only, from index.html, with access logs and the security headers policy', () => {
    const config = resourcesOf(s, 'AWS::CloudFront::Distribution')[distributionId].Properties
      .DistributionConfig;
    expect(config).toMatchObject({
      DefaultRootObject: 'index.html',
      DefaultCacheBehavior: {
        ViewerProtocolPolicy: 'https-only',
        AllowedMethods: ['GET', 'HEAD'],
        Compress: true,
        ResponseHeadersPolicyId: { Ref: s.logicalId(s.stack.dashboard?.responseHeadersPolicy as never) },
      },
      Logging: { Bucket: { 'Fn::GetAtt': [expect.any(String), 'RegionalDomainName'] }, Prefix: 'dashboard/' },
    });
    expect(config.Origins[0]).toMatchObject({
      S3OriginConfig: { OriginAccessIdentity: '' },
      OriginAccessControlId: { 'Fn::GetAtt': [expect.any(String), 'Id'] },
    });
  });

  /** A response headers policy's config, by the construct that made it. */
  const policyConfig = (policy: unknown): Json =>
    resourcesOf(s, 'AWS::CloudFront::ResponseHeadersPolicy')[s.logicalId(policy as never)].Properties
      .ResponseHeadersPolicyConfig;
  /** A policy's CSP as text (tokens for what CloudFormation fills in), directive by directive. */
  const cspOf = (headers: Json): { text: string; directives: Record<string, string> } => {
    const csp: Json = headers.SecurityHeadersConfig.ContentSecurityPolicy.ContentSecurityPolicy;
    const text = (csp['Fn::Join'][1] as Json[])
      .map((part) => (typeof part === 'string' ? part : '<token>'))
      .join('');
    const directives = Object.fromEntries(
      text.split('; ').map((d) => [d.slice(0, d.indexOf(' ')), d.slice(d.indexOf(' ') + 1)]),
    );
    return { text, directives };
  };

  it('sends HSTS, nosniff, DENY framing, no referrer and a strict Content-Security-Policy', () => {
    // Two policies: the dashboard's, and the API reference page's (below).
    expect(Object.keys(resourcesOf(s, 'AWS::CloudFront::ResponseHeadersPolicy'))).toHaveLength(2);
    const headers = policyConfig(s.stack.dashboard?.responseHeadersPolicy);
    expect(headers.SecurityHeadersConfig).toMatchObject({
      StrictTransportSecurity: {
        AccessControlMaxAgeSec: 63_072_000,
        IncludeSubdomains: true,
        Override: true,
      },
      ContentTypeOptions: { Override: true },
      FrameOptions: { FrameOption: 'DENY', Override: true },
      ReferrerPolicy: { ReferrerPolicy: 'no-referrer', Override: true },
    });
    const { text, directives } = cspOf(headers);
    // The same directives as the local server sends (lib/dashboard/headers.ts), in the same order.
    expect(Object.keys(directives)).toEqual(contentSecurityPolicyDirectives({ connect: [] }).map(([n]) => n));
    expect(directives).toMatchObject({
      'default-src': "'none'",
      'script-src': "'self'",
      'style-src': "'self'",
      'frame-ancestors': "'none'",
      'base-uri': "'none'",
      'object-src': 'blob:',
    });
    expect(text).not.toContain('unsafe-');
    // The page calls API Gateway and S3 in the stack's region, and this pool's Cognito domain.
    expect(directives['connect-src']).toBe(
      "'self' https://*.execute-api.<token>.<token> https://*.s3.<token>.<token> https://<token>.auth.eu-west-1.amazoncognito.com",
    );
    const custom = Object.fromEntries(
      (headers.CustomHeadersConfig.Items as Json[]).map((h) => [h.Header, h.Value]),
    );
    expect(custom).toMatchObject({ 'Cross-Origin-Opener-Policy': 'same-origin' });
  });

  it("gives the API reference page alone a policy of its own: the viewer's styles by hash, nothing unsafe besides", () => {
    const config = only(s, 'AWS::CloudFront::Distribution').Properties.DistributionConfig;
    expect(config.CacheBehaviors).toEqual([
      expect.objectContaining({
        PathPattern: 'reference.html',
        ViewerProtocolPolicy: 'https-only',
        ResponseHeadersPolicyId: { Ref: s.logicalId(s.stack.dashboard?.referenceHeadersPolicy as never) },
      }),
    ]);
    const headers = policyConfig(s.stack.dashboard?.referenceHeadersPolicy);
    expect(headers.SecurityHeadersConfig).toMatchObject({
      FrameOptions: { FrameOption: 'DENY', Override: true },
      ContentTypeOptions: { Override: true },
    });
    const { text, directives } = cspOf(headers);
    const main = cspOf(policyConfig(s.stack.dashboard?.responseHeadersPolicy)).directives;
    expect(directives).toMatchObject({
      'script-src': "'self'",
      'connect-src': main['connect-src'],
      'style-src': ["'self'", "'unsafe-hashes'", ...REFERENCE_STYLE_HASHES.map((h) => `'${h}'`)].join(' '),
      'frame-src': "'none'",
      'object-src': "'none'",
    });
    expect(text).not.toMatch(/unsafe-inline|unsafe-eval/);
  });

  it('has a Cognito domain with managed login and a PKCE app client for the distribution, without a secret', () => {
    const domain = only(s, 'AWS::Cognito::UserPoolDomain').Properties;
    expect(domain.ManagedLoginVersion).toBe(2);
    const clientId = s.logicalId(s.stack.dashboard?.client as never);
    const client = resourcesOf(s, 'AWS::Cognito::UserPoolClient')[clientId].Properties;
    const url = { 'Fn::Join': ['', ['https://', { 'Fn::GetAtt': [distributionId, 'DomainName'] }, '/']] };
    expect(client).toMatchObject({
      GenerateSecret: false,
      AllowedOAuthFlowsUserPoolClient: true,
      AllowedOAuthFlows: ['code'],
      AllowedOAuthScopes: ['openid', 'email'],
      SupportedIdentityProviders: ['COGNITO'],
      CallbackURLs: [url],
      LogoutURLs: [url],
      EnableTokenRevocation: true,
      PreventUserExistenceErrors: 'ENABLED',
    });
    s.template.hasResourceProperties('AWS::Cognito::ManagedLoginBranding', {
      ClientId: { Ref: clientId },
      UseCognitoProvidedValues: true,
    });
  });

  it("allows the distribution's origin, and no other, to call the API and read PDFs (CORS)", () => {
    const api = only(s, 'AWS::ApiGatewayV2::Api').Properties;
    expect(api.CorsConfiguration).toEqual({
      AllowOrigins: [origin],
      AllowMethods: corsPolicy(['https://x.example.com'])?.allowMethods,
      AllowHeaders: ['authorization', 'content-type', 'idempotency-key'],
      ExposeHeaders: expect.arrayContaining(['x-request-id', 'retry-after']),
      MaxAge: 600,
    });
    const pdfBucket = resourcesOf(s, 'AWS::S3::Bucket')[s.logicalId(s.stack.pdfBucket.bucket)].Properties;
    expect(pdfBucket.CorsConfiguration).toEqual({
      CorsRules: [{ AllowedMethods: ['GET'], AllowedOrigins: [origin], MaxAge: 600 }],
    });
    // Configured origins join it, each still checked.
    const both = synthServiceStack({ props: { corsAllowedOrigins: ['https://admin.example.com'] } });
    expect(only(both, 'AWS::ApiGatewayV2::Api').Properties.CorsConfiguration.AllowOrigins).toEqual([
      'https://admin.example.com',
      origin,
    ]);
    expect(() =>
      synthServiceStack({ props: { corsAllowedOrigins: ['https://admin.example.com/app'] } }),
    ).toThrow(/CORS origin/);
  });

  it('writes config.json at deploy time from the API URL, the pool, the client and the domain', () => {
    const deployments = Object.values(resourcesOf(s, 'Custom::CDKBucketDeployment')).map((d) => d.Properties);
    const pages = deployments.find((d) => d.DestinationBucketKeyPrefix === undefined);
    const assets = deployments.find((d) => d.DestinationBucketKeyPrefix === 'assets/');
    expect(pages).toMatchObject({ Prune: false, SystemMetadata: { 'cache-control': 'no-cache' } });
    expect(assets).toMatchObject({
      Prune: false,
      SystemMetadata: { 'cache-control': 'public, max-age=31536000, immutable' },
    });
    const markers = JSON.stringify(pages.SourceMarkers);
    for (const ref of [
      { Ref: s.logicalId(s.stack.api.httpApi) },
      { Ref: s.logicalId(s.stack.dashboard?.client as never) },
      { Ref: s.logicalId(s.stack.dashboard?.domain as never) },
      { 'Fn::GetAtt': [s.logicalId(s.stack.userPool.userPool as never), 'ProviderURL'] },
    ]) {
      expect(markers).toContain(JSON.stringify(ref));
    }
    // The staged files: config.json with the markers in its places, and the built site.
    const staged = (key: string) => join(s.assembly.directory, `asset.${key.replace(/\.zip$/, '')}`);
    const [siteKey, configKey] = pages.SourceObjectKeys as string[];
    const config = JSON.parse(readFileSync(join(staged(configKey as string), 'config.json'), 'utf8'));
    expect(config).toMatchObject({
      apiUrl: expect.stringContaining('<<marker:'),
      environment: 'aws',
      auth: {
        clientId: expect.stringContaining('<<marker:'),
        scope: 'openid email',
        endpoints: {
          issuer: expect.stringMatching(/^https:\/\/<<marker:/),
          authorization_endpoint: expect.stringMatching(/\/oauth2\/authorize$/),
          token_endpoint: expect.stringMatching(/\/oauth2\/token$/),
          revocation_endpoint: expect.stringMatching(/\/oauth2\/revoke$/),
          end_session_endpoint: expect.stringMatching(/\/logout$/),
        },
      },
    });
    const index = readFileSync(join(staged(siteKey as string), 'index.html'), 'utf8');
    const script = /<script type="module" src="assets\/([^"]+)"/.exec(index)?.[1];
    expect(readdirSync(staged(assets.SourceObjectKeys[0]))).toContain(script);
    expect(existsSync(join(staged(siteKey as string), 'config.json'))).toBe(false);
  });

  it("leads the API's / to the dashboard: the fallback function is given the distribution's URL", () => {
    const fallback =
      s.template.findResources('AWS::Lambda::Function')[
        s.logicalId(s.stack.api.functions.get('fallback') as never)
      ];
    expect(fallback?.Properties.Environment.Variables.DASHBOARD_URL).toEqual({
      'Fn::Join': ['', ['https://', { 'Fn::GetAtt': [distributionId, 'DomainName'] }, '/']],
    });
  });

  it('outputs the dashboard URL, and passes cdk-nag with every finding acknowledged', () => {
    expect(s.template.findOutputs('DashboardUrl').DashboardUrl?.Value).toEqual({
      'Fn::Join': ['', ['https://', { 'Fn::GetAtt': [distributionId, 'DomainName'] }, '/']],
    });
    expect(s.nagFindings).toEqual([]);
  });
});

describe("the dashboard's plan contact", () => {
  it('is written into config.json from the dashboardPlanContact prop, which the context sets', () => {
    const contact = 'Write to billing@example.com for the pro plan';
    const app = new App({ context: { dashboardPlanContact: contact } });
    expect(stackPropsFromContext(app.node).dashboardPlanContact).toBe(contact);
    const s = synthServiceStack({ props: { dashboardPlanContact: contact } });
    const deployments = Object.values(resourcesOf(s, 'Custom::CDKBucketDeployment')).map((d) => d.Properties);
    const pages = deployments.find((d) => d.DestinationBucketKeyPrefix === undefined);
    const configKey = (pages.SourceObjectKeys as string[])[1] as string;
    const dir = join(s.assembly.directory, `asset.${configKey.replace(/\.zip$/, '')}`);
    expect(JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')).planContact).toBe(contact);
  });
});

describe('the dashboard elsewhere', () => {
  it('passes cdk-nag in a throwaway stack with waf, whose buckets go with it', () => {
    const s = synthServiceStack({
      props: { retainData: false, waf: true, env: { account: '123456789012', region: 'eu-west-1' } },
    });
    expect(s.stack.dashboard).toBeDefined();
    expect(s.nagFindings).toEqual([]);
  });

  it('can be left out: no distribution, no CORS, only the service client accepted', () => {
    const s = synthServiceStack({ props: { dashboard: false } });
    expect(s.stack.dashboard).toBeUndefined();
    s.template.resourceCountIs('AWS::CloudFront::Distribution', 0);
    s.template.resourceCountIs('AWS::Cognito::UserPoolDomain', 0);
    expect(only(s, 'AWS::ApiGatewayV2::Api').Properties.CorsConfiguration).toBeUndefined();
    const pdfFn =
      s.template.findResources('AWS::Lambda::Function')[
        s.logicalId(s.stack.api.functions.get('pdf') as never)
      ];
    expect(pdfFn?.Properties.Environment.Variables.COGNITO_CLIENT_ID).toEqual({
      Ref: s.logicalId(s.stack.userPool.userPoolClient as never),
    });
    expect(s.template.findOutputs('DashboardUrl')).toEqual({});
    expect(s.nagFindings).toEqual([]);
  });

  it('is off with an existing user pool, and refuses to be on with one', () => {
    const existingUserPool = { userPoolId: 'eu-west-1_AbCdEf123', userPoolClientId: 'client123' };
    expect(synthServiceStack({ props: { existingUserPool } }).stack.dashboard).toBeUndefined();
    expect(() => synthServiceStack({ props: { existingUserPool, dashboard: true } })).toThrow(
      /dashboard.*existingUserPool/,
    );
  });

  it('is switched by the dashboard context', () => {
    const app = new App({ context: { dashboard: 'false' } });
    expect(stackPropsFromContext(app.node).dashboard).toBe(false);
    expect(stackPropsFromContext(new App().node).dashboard).toBeUndefined();
  });
});
