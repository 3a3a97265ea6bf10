/**
 * The dashboard in the cloud: its static site (lib/dashboard/site/, built at synth by the local
 * esbuild) in a private S3 bucket, served by a CloudFront distribution through origin access
 * control, HTTPS only, with security headers (a strict Content-Security-Policy among them) from a
 * response headers policy; a Cognito domain for managed login and an app client for the page
 * (authorization code with PKCE, no secret; callback and sign-out URL: the distribution's); and the
 * page's runtime configuration (config.json: API URL, pool, client, domain) written into the bucket
 * at deploy time from the stack's own values.
 *
 * Two phases, because the API needs the dashboard (its app client id for the token verifier, its
 * origin for CORS) and the page needs the API (its URL in config.json): construct, then
 * `deploySite({ apiUrl })` once the API exists.
 */
import { Aws, Duration, Fn, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import {
  AllowedMethods,
  CachePolicy,
  Distribution,
  HeadersFrameOption,
  HeadersReferrerPolicy,
  HttpVersion,
  ResponseHeadersPolicy,
  ViewerProtocolPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import { S3BucketOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import {
  CfnManagedLoginBranding,
  ManagedLoginVersion,
  OAuthScope,
  type UserPool,
  type UserPoolClient,
  UserPoolClientIdentityProvider,
  type UserPoolDomain,
} from 'aws-cdk-lib/aws-cognito';
import type { Policy } from 'aws-cdk-lib/aws-iam';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { BucketDeployment, CacheControl, Source } from 'aws-cdk-lib/aws-s3-deployment';
import { Construct } from 'constructs';
import { createAccessLogBucket } from '../access-log-bucket.js';
import { ASSETS_DIR, buildSiteSync, CONFIG_FILE, REFERENCE_PAGE, writeSite } from './build.js';
import { cognitoEndpoints, DASHBOARD_SCOPE, type DashboardConfig } from './config.js';
import {
  contentSecurityPolicy,
  contentSecurityPolicyDirectives,
  HSTS_MAX_AGE_SECONDS,
  referenceContentSecurityPolicy,
  SECURITY_HEADERS,
} from './headers.js';

export interface DashboardProps {
  /** The pool users sign in to; the dashboard adds its domain and app client to it. */
  readonly userPool: UserPool;
  /**
   * What happens to the site and log buckets when the stack is deleted (the site is rebuilt from
   * the repository on every deploy; the logs are the distribution's access logs).
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
}

export interface DashboardSiteProps {
  /** The API's base URL, ending with a slash. */
  readonly apiUrl: string;
  /** The API's origin (`https://<host>`), exactly: the page's CSP allows it and no other API host. */
  readonly apiOrigin: string;
  /** The PDF bucket's origin for presigned URLs (`https://<bucket>.s3.<region>.amazonaws.com`). */
  readonly pdfBucketOrigin: string;
  /** DashboardConfig.planContact. @default the page's own line (the operator changes plans) */
  readonly planContact?: string | undefined;
}

export class Dashboard extends Construct {
  readonly bucket: Bucket;
  readonly logBucket: Bucket;
  readonly distribution: Distribution;
  readonly responseHeadersPolicy: ResponseHeadersPolicy;
  /** The API reference page's (reference.html): the same headers, its own CSP. */
  readonly referenceHeadersPolicy: ResponseHeadersPolicy;
  readonly domain: UserPoolDomain;
  readonly client: UserPoolClient;
  /** `https://<distribution>.cloudfront.net`: the origin the API and the PDF bucket allow (CORS). */
  readonly origin: string;
  /** The page's URL (the origin with a slash): sign-in callback and sign-out URL. */
  readonly url: string;
  /** aws-cdk-lib's Lambda that copies the site into the bucket (one per stack), once deploySite ran. */
  bucketDeploymentHandler?: Construct;
  private readonly userPool: UserPool;
  private readonly removalPolicy: RemovalPolicy;

  constructor(scope: Construct, id: string, props: DashboardProps) {
    super(scope, id);
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
    this.removalPolicy = removalPolicy;
    this.userPool = props.userPool;

    // Managed login on a Cognito domain. Prefixes are unique per region across all accounts: the
    // stack id's UUID (first group) makes one without a name to choose, known only at deploy time.
    const stackUuid = Fn.select(2, Fn.split('/', Aws.STACK_ID));
    this.domain = props.userPool.addDomain('DashboardDomain', {
      cognitoDomain: {
        domainPrefix: Fn.join('-', ['pdf-dashboard', Fn.select(0, Fn.split('-', stackUuid))]),
      },
      managedLoginVersion: ManagedLoginVersion.NEWER_MANAGED_LOGIN,
    });
    const domainUrl = this.domain.baseUrl();

    this.bucket = new Bucket(this, 'SiteBucket', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      removalPolicy,
      autoDeleteObjects: removalPolicy === RemovalPolicy.DESTROY,
    });
    Validations.of(this.bucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        "The bucket holds the dashboard's static files, written only by the stack's deployment and read " +
        "only by CloudFront through origin access control; the distribution's access logs record every " +
        'viewer request, so server access logs would repeat them.',
    });

    this.logBucket = createAccessLogBucket(this, 'AccessLogs', {
      of: "the dashboard distribution's",
      removalPolicy,
    });

    // connect-src names host patterns here, not the API's and the PDF bucket's own hosts: both allow
    // the distribution's origin (CORS), so naming them in the distribution's headers would make the
    // distribution and them depend on each other, which CloudFormation cannot create. The exact
    // hosts are in a second policy, a <meta> element that deploySite writes into index.html at
    // deploy time (after all three exist); a browser enforces both, so the page may reach only the
    // hosts in both lists: the API's own host, the PDF bucket's and this pool's Cognito domain.
    const connectPatterns = [
      `https://*.execute-api.${Aws.REGION}.${Aws.URL_SUFFIX}`,
      `https://*.s3.${Aws.REGION}.${Aws.URL_SUFFIX}`,
      domainUrl,
    ];
    const csp = contentSecurityPolicy({ connect: connectPatterns });
    const headersPolicy = (id: string, comment: string, contentSecurityPolicy: string) =>
      new ResponseHeadersPolicy(this, id, {
        comment,
        securityHeadersBehavior: {
          contentSecurityPolicy: { contentSecurityPolicy, override: true },
          strictTransportSecurity: {
            accessControlMaxAge: Duration.seconds(HSTS_MAX_AGE_SECONDS),
            includeSubdomains: true,
            override: true,
          },
          contentTypeOptions: { override: true },
          frameOptions: { frameOption: HeadersFrameOption.DENY, override: true },
          referrerPolicy: { referrerPolicy: HeadersReferrerPolicy.NO_REFERRER, override: true },
        },
        customHeadersBehavior: {
          customHeaders: [
            {
              header: 'Cross-Origin-Opener-Policy',
              value: SECURITY_HEADERS['cross-origin-opener-policy'],
              override: true,
            },
            { header: 'Permissions-Policy', value: SECURITY_HEADERS['permissions-policy'], override: true },
          ],
        },
      });
    this.responseHeadersPolicy = headersPolicy(
      'SecurityHeaders',
      'PDF service dashboard: CSP, HSTS and other security headers',
      csp,
    );
    // The API reference page alone allows its viewer's inline styles, by hash (headers.ts).
    this.referenceHeadersPolicy = headersPolicy(
      'ReferenceSecurityHeaders',
      'PDF service API reference: its own CSP (the viewer’s styles by hash), HSTS and the rest',
      referenceContentSecurityPolicy({ connect: connectPatterns }),
    );
    const origin = S3BucketOrigin.withOriginAccessControl(this.bucket);
    const behavior = (responseHeadersPolicy: ResponseHeadersPolicy) => ({
      origin,
      viewerProtocolPolicy: ViewerProtocolPolicy.HTTPS_ONLY,
      allowedMethods: AllowedMethods.ALLOW_GET_HEAD,
      // Objects say how long they keep (deploySite): hashed assets for good, the rest revalidated.
      cachePolicy: CachePolicy.CACHING_OPTIMIZED,
      responseHeadersPolicy,
      compress: true,
    });

    this.distribution = new Distribution(this, 'Distribution', {
      comment: 'PDF service dashboard',
      defaultRootObject: 'index.html',
      defaultBehavior: behavior(this.responseHeadersPolicy),
      additionalBehaviors: { [REFERENCE_PAGE]: behavior(this.referenceHeadersPolicy) },
      httpVersion: HttpVersion.HTTP2_AND_3,
      enableLogging: true,
      logBucket: this.logBucket,
      logFilePrefix: 'dashboard/',
    });
    Validations.of(this.distribution).acknowledge({
      id: 'AwsSolutions-CFR1',
      reason:
        'The dashboard serves accounts wherever they are, as the API does. A deployment that serves known ' +
        'countries only can add a geo restriction.',
    });
    Validations.of(this.distribution).acknowledge({
      id: 'AwsSolutions-CFR2',
      reason:
        'The distribution serves static files from S3 (no compute behind it, nothing to inject into): a ' +
        'web ACL would cost its monthly fee and per-request charges to protect nothing an attacker can ' +
        'reach. The API, which the page calls, has its own throttling and the optional WAF (waf).',
    });
    Validations.of(this.distribution).acknowledge({
      id: 'AwsSolutions-CFR4',
      reason:
        'The distribution answers on its *.cloudfront.net name, whose default certificate CloudFront always ' +
        'offers with its TLSv1 policy; a minimum of TLS 1.2 needs a custom domain and an ACM certificate in ' +
        'us-east-1, which this stack does not manage. Viewers are HTTPS only; CloudFront reaches S3 over TLS.',
    });

    this.origin = `https://${this.distribution.distributionDomainName}`;
    this.url = `${this.origin}/`;

    this.client = props.userPool.addClient('DashboardClient', {
      // A browser page cannot keep a secret: authorization code with PKCE (Cognito requires the
      // challenge from a client that sends one, and the page always does).
      generateSecret: false,
      oAuth: {
        flows: { authorizationCodeGrant: true },
        scopes: DASHBOARD_SCOPE.split(' ').map((scope) => OAuthScope.custom(scope)),
        callbackUrls: [this.url],
        logoutUrls: [this.url],
      },
      supportedIdentityProviders: [UserPoolClientIdentityProvider.COGNITO],
      // Managed login signs in; the page itself only exchanges codes and refresh tokens.
      authFlows: { userSrp: true },
      preventUserExistenceErrors: true,
      enableTokenRevocation: true,
      idTokenValidity: Duration.hours(1),
      accessTokenValidity: Duration.hours(1),
      // A working day: the page keeps its tokens in sessionStorage, gone with the tab anyway.
      refreshTokenValidity: Duration.hours(12),
    });
    new CfnManagedLoginBranding(this, 'LoginBranding', {
      userPoolId: props.userPool.userPoolId,
      clientId: this.client.userPoolClientId,
      useCognitoProvidedValues: true,
    });
  }

  /** The app client whose ID tokens the API must accept. */
  get clientId(): string {
    return this.client.userPoolClientId;
  }

  /**
   * Uploads the site and its config.json. Hashed files in `assets/` are cached for a year and
   * never pruned (a page opened before a deploy still finds its editor chunk); index.html and
   * config.json say no-cache, which CloudFront's CachingOptimized policy keeps for its minimum TTL
   * of one second, so a deploy shows within a second without an invalidation (and without the
   * distribution-wide cloudfront:CreateInvalidation grant that BucketDeployment gives for one).
   */
  deploySite({ apiUrl, apiOrigin, pdfBucketOrigin, planContact }: DashboardSiteProps): {
    readonly assets: BucketDeployment;
    readonly pages: BucketDeployment;
  } {
    const site = buildSiteSync();
    const dirs = writeSite(site);
    const exactHosts = contentSecurityPolicyDirectives({
      connect: [apiOrigin, pdfBucketOrigin, this.domain.baseUrl()],
    }).filter(([name]) => name === 'connect-src');
    const withExactHosts = (page: string) => {
      const html = new TextDecoder().decode(site.files.get(page));
      if (!html.includes('<head>')) throw new Error(`dashboard build: ${page} lacks <head>`);
      return html.replace(
        '<head>',
        `<head>\n    <meta http-equiv="Content-Security-Policy" content="${exactHosts.map(([n, v]) => `${n} ${v}`).join('; ')}">`,
      );
    };
    const config: DashboardConfig = {
      apiUrl,
      environment: 'aws',
      ...(planContact?.trim() ? { planContact: planContact.trim() } : {}),
      auth: {
        clientId: this.client.userPoolClientId,
        scope: DASHBOARD_SCOPE,
        // The pool's ProviderURL has no scheme; the ID tokens' iss is this URL with https://.
        endpoints: cognitoEndpoints(this.domain.baseUrl(), `https://${this.userPool.userPoolProviderUrl}`),
      },
    };
    // The deployment handler's own log group: without one, CDK makes it with two years' retention
    // (731 days), kept after the stack is deleted, unlike every other log group of the stack.
    const logGroup = new LogGroup(this, 'DeploymentLogs', {
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: this.removalPolicy,
    });
    const assets = new BucketDeployment(this, 'DeployAssets', {
      logGroup,
      sources: [Source.asset(dirs.assets)],
      destinationBucket: this.bucket,
      destinationKeyPrefix: `${ASSETS_DIR}/`,
      prune: false,
      cacheControl: [CacheControl.fromString('public, max-age=31536000, immutable')],
    });
    const pages = new BucketDeployment(this, 'DeployPages', {
      logGroup,
      // The built site, config.json, then index.html and reference.html again with the exact hosts'
      // policy: sources are unpacked in order, so these copies replace the built ones.
      sources: [
        Source.asset(dirs.root),
        Source.jsonData(CONFIG_FILE, config),
        Source.data('index.html', withExactHosts('index.html')),
        Source.data(REFERENCE_PAGE, withExactHosts(REFERENCE_PAGE)),
      ],
      destinationBucket: this.bucket,
      // Must not delete assets/, which the other deployment owns.
      prune: false,
      cacheControl: [CacheControl.noCache()],
    });
    // index.html names the new assets: they must be there first.
    pages.node.addDependency(assets);
    // Each BucketDeployment makes its own AwsCliLayer, but the handler they share (a singleton)
    // takes the first one's: the second would be deployed as an identical layer version nothing
    // uses. One handler, one layer.
    pages.node.tryRemoveChild('AwsCliLayer');
    this.acknowledgeDeploymentHandler(pages);
    return { assets, pages };
  }

  /**
   * BucketDeployment's handler is aws-cdk-lib's own Lambda (one per stack, shared by both
   * deployments); its role and runtime are CDK's choices. Each finding is acknowledged by its exact
   * text: the grants' wildcards name this site bucket and the CDK asset bucket only, so another
   * wildcard still fails the synth.
   */
  private acknowledgeDeploymentHandler(deployment: BucketDeployment): void {
    const stack = Stack.of(this);
    const role = deployment.handlerRole;
    const handler = role.node.scope as Construct;
    this.bucketDeploymentHandler = handler;
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
      reason:
        "BucketDeployment's handler (aws-cdk-lib's) writes its logs through AWSLambdaBasicExecutionRole, " +
        'which grants creating and writing log streams and nothing else.',
    });
    const copying =
      'BucketDeployment (aws-cdk-lib) copies the built site, whose file names carry content hashes known only ' +
      'at build time, from the CDK asset bucket into the site bucket, and replaces what it wrote before: its ' +
      'grants read the asset bucket and read, write and delete objects of the site bucket, and nothing else.';
    for (const action of ['s3:GetBucket*', 's3:GetObject*', 's3:List*', 's3:Abort*', 's3:DeleteObject*']) {
      Validations.of(role).acknowledge({ id: `AwsSolutions-IAM5[Action::${action}]`, reason: copying });
    }
    // The objects of the two buckets, as the grants wrote them (the asset bucket's name depends on
    // the synthesizer and on what synth knows of the account and region).
    const siteObjects = nagText(stack.resolve(this.bucket.arnForObjects('*')));
    const policy = role.node.tryFindChild('DefaultPolicy') as Policy | undefined;
    const document = stack.resolve(policy?.document) as { Statement?: { Resource?: unknown }[] } | undefined;
    const resources = new Set(
      (document?.Statement ?? []).flatMap((st) => [st.Resource].flat()).map((r) => nagText(r)),
    );
    for (const resource of resources) {
      if (resource === siteObjects || /^arn:[^:]+:s3:::cdk-[^/]*-assets-[^/]*\/\*$/.test(resource)) {
        Validations.of(role).acknowledge({ id: `AwsSolutions-IAM5[Resource::${resource}]`, reason: copying });
      }
    }
    Validations.of(handler).acknowledge({
      id: 'AwsSolutions-L1',
      reason:
        "BucketDeployment's handler runtime is set by aws-cdk-lib (Python, with the AWS CLI layer) and moves " +
        'with CDK upgrades; it runs only while CloudFormation deploys, never for a request.',
    });
  }
}

/** A resolved CloudFormation value as cdk-nag writes it in a finding (`<Logical.Arn>`, `<AWS::Region>`). */
const nagText = (value: unknown): string => {
  if (typeof value === 'string') return value.replace(/\$\{/g, '<').replace(/\}/g, '>');
  const v = value as Record<string, unknown>;
  if (Array.isArray(v['Fn::Join'])) {
    const [delimiter, items] = v['Fn::Join'] as [string, unknown[]];
    return items.map(nagText).join(delimiter);
  }
  if (Array.isArray(v['Fn::GetAtt'])) {
    const [resource, attribute] = v['Fn::GetAtt'] as [unknown, unknown];
    return `<${nagText(resource)}.${nagText(attribute)}>`;
  }
  if ('Fn::Sub' in v) return nagText([v['Fn::Sub']].flat()[0]);
  if ('Ref' in v) return `<${nagText(v.Ref)}>`;
  return JSON.stringify(value);
};
