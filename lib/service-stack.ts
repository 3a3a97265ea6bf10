/**
 * The PDF render service in one stack. It only composes: each construct holds its own defaults,
 * grants and cdk-nag acknowledgements (with their reasons, beside what they excuse).
 */
import { type CfnElement, CfnOutput, RemovalPolicy, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Topic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { ApiKeySecret } from './api-key-secret.js';
import { PdfBucket } from './pdf-bucket.js';
import { RendererFunction } from './renderer-function.js';
import { ServiceApi } from './service-api.js';
import { resolveSettings, type ServiceSettings } from './service-settings.js';
import { ServiceTable } from './service-table.js';
import { ServiceUserPool, type UserPoolIds } from './user-pool.js';

export interface PdfServiceStackProps extends StackProps, ServiceSettings {
  /**
   * An existing Cognito user pool and app client to accept session tokens from.
   * @default a new user pool and app client
   */
  readonly existingUserPool?: UserPoolIds;
  /**
   * Require TOTP MFA for every sign-in to the user pool this stack creates.
   * @default false: offered, not required
   */
  readonly requireMfa?: boolean;
  /**
   * Keep the table, the PDF bucket, the API-key secret, the user pool and the logs when the
   * stack is deleted. Set false for throwaway stacks (tests, previews).
   * @default true
   */
  readonly retainData?: boolean;
  /**
   * The renderer's memory in MiB.
   * @default 2048 (the reasoning is in renderer-function.ts)
   */
  readonly rendererMemorySizeMiB?: number;
  /**
   * Print tagged (accessible) PDFs.
   * @default false (see renderer-function.ts)
   */
  readonly taggedPdf?: boolean;
  /**
   * An SNS topic that the renderer's error and throttle alarms notify.
   * @default no notification (the alarms still show in CloudWatch)
   */
  readonly alarmTopicArn?: string;
  /**
   * API-wide request rate (per second) and burst, enforced by API Gateway before any Lambda runs;
   * the per-account plan limits are enforced by the API itself.
   * @default API Gateway's account-level limits only
   */
  readonly apiThrottle?: { readonly rateLimit: number; readonly burstLimit: number };
}

export class PdfServiceStack extends Stack {
  readonly api: ServiceApi;
  readonly renderer: RendererFunction;
  readonly table: ServiceTable;
  readonly pdfBucket: PdfBucket;
  readonly userPool: ServiceUserPool;
  readonly apiKeySecret: ApiKeySecret;

  constructor(scope: Construct, id: string, props: PdfServiceStackProps = {}) {
    super(scope, id, props);
    const settings = resolveSettings(props);
    const retain = props.retainData ?? true;
    const logRemovalPolicy = retain ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;

    this.table = new ServiceTable(this, 'Table', { retainOnDelete: retain });
    this.pdfBucket = new PdfBucket(this, 'PdfBucket', {
      pdfRetentionDays: settings.pdfRetentionDays,
      retainOnDelete: retain,
    });
    this.userPool = new ServiceUserPool(this, 'Auth', {
      existing: props.existingUserPool,
      requireMfa: props.requireMfa,
      retainOnDelete: retain,
    });
    this.apiKeySecret = new ApiKeySecret(this, 'ApiKeySecret', { retainOnDelete: retain });
    this.renderer = new RendererFunction(this, 'Renderer', {
      timeoutSeconds: settings.rendererTimeoutSeconds,
      memorySizeMiB: props.rendererMemorySizeMiB,
      taggedPdf: props.taggedPdf,
      alarmActions: props.alarmTopicArn
        ? [new SnsAction(Topic.fromTopicArn(this, 'AlarmTopic', props.alarmTopicArn))]
        : [],
      logRemovalPolicy,
    });
    this.api = new ServiceApi(this, 'Api', {
      table: this.table,
      pdfBucket: this.pdfBucket,
      renderer: this.renderer.function,
      userPool: this.userPool,
      apiKeySecret: this.apiKeySecret,
      environment: settings.environment,
      throttle: props.apiThrottle,
      logRemovalPolicy,
    });

    new CfnOutput(this, 'ApiUrl', {
      value: this.api.url,
      description: 'Base URL of the API (paths start with v1/)',
    });
    new CfnOutput(this, 'UserPoolId', { value: this.userPool.userPoolId });
    new CfnOutput(this, 'UserPoolClientId', { value: this.userPool.userPoolClientId });
    new CfnOutput(this, 'ApiKeysUrl', {
      value: `${this.api.url}v1/api-keys`,
      description:
        'Where API keys are made: POST {"name": "..."} with a session token (Authorization: Bearer <Cognito ID token>); the key is in that answer only',
    });
    new CfnOutput(this, 'PdfBucketName', { value: this.pdfBucket.bucketName });
    new CfnOutput(this, 'TableName', { value: this.table.tableName });
    new CfnOutput(this, 'RendererFunctionName', { value: this.renderer.function.functionName });

    this.acknowledgeGrants();
  }

  /**
   * Wildcards that the grants produce and that cannot be narrowed. cdk-nag reports each wildcard
   * as its own finding, and each is acknowledged by its exact text, so a new wildcard still fails.
   */
  private acknowledgeGrants(): void {
    const arnOf = (construct: Construct) =>
      `<${this.getLogicalId(construct.node.defaultChild as CfnElement)}.Arn>`;
    const reasons: Record<string, string> = {
      'Resource::*':
        'X-Ray accepts trace segments only on Resource "*" (it has no resource-level permissions); tracing ' +
        'is how a slow render is followed from API Gateway through DynamoDB, S3 and the renderer.',
      [`Resource::${arnOf(this.table)}/index/*`]:
        "The table's queries run on its global secondary indexes (GSI1, GSI2); grantReadWriteData names " +
        'them as <table>/index/*, which covers only this table.',
      [`Resource::${arnOf(this.pdfBucket.bucket)}/pdf/*`]:
        'Presigned URLs are signed for keys pdf/<accountId>/<jobId>.pdf, known only per request; the grant ' +
        'is limited to GetObject and PutObject under the pdf/ prefix of this bucket.',
      [`Resource::${arnOf(this.renderer.function)}:*`]:
        "grantInvoke names the renderer and its versions (<renderer>:*): still this one function's code only.",
    };
    for (const fn of this.api.functions.values()) {
      for (const [finding, reason] of Object.entries(reasons)) {
        Validations.of(fn.role ?? fn).acknowledge({ id: `AwsSolutions-IAM5[${finding}]`, reason });
      }
    }
  }
}
