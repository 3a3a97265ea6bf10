/**
 * The PDF render service in one stack. It only composes: each construct holds its own defaults,
 * grants and cdk-nag acknowledgements (with their reasons, beside what they excuse).
 */

import { type CfnElement, CfnOutput, RemovalPolicy, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import { EventBus } from 'aws-cdk-lib/aws-events';
import type { Construct } from 'constructs';
import {
  type ConsumerDeclaration,
  consumerOf,
  consumers as serviceConsumers,
} from '../functions/consumers.js';
import { type QueueDeclaration, renderQueue, queues as serviceQueues } from '../functions/queues.js';
import { FALLBACK_RESOURCE } from '../functions/routes.js';
import { FALLBACK_VARIABLES } from '../functions/wiring.js';
import { AlarmTopic } from './alarm-topic.js';
import { ApiDomain, type CustomDomainSettings } from './api-domain.js';
import { ApiKeySecret } from './api-key-secret.js';
import { Dashboard } from './dashboard/dashboard.js';
import { PdfBucket } from './pdf-bucket.js';
import { DEFAULT_RENDERER_RESERVED_CONCURRENCY, RendererFunction } from './renderer-function.js';
import { type ApiThrottle, ServiceApi } from './service-api.js';
import { consumerConstructId, ServiceConsumer } from './service-consumer.js';
import { ServiceMonitoring } from './service-monitoring.js';
import { queueConstructId, ServiceQueue } from './service-queue.js';
import { resolveSettings, type ServiceSettings } from './service-settings.js';
import { ServiceTable } from './service-table.js';
import { type CognitoSesEmail, ServiceUserPool, type UserPoolIds } from './user-pool.js';

export interface PdfServiceStackProps extends StackProps, ServiceSettings {
  /**
   * An existing Cognito user pool and app client to accept session tokens from.
   * @default a new user pool and app client
   */
  readonly existingUserPool?: UserPoolIds;
  /**
   * Send the user pool's mail (invitations, codes) through Amazon SES from a verified address.
   * @default Cognito's own sender, limited to a few messages a day (docs/deploy.md)
   */
  readonly cognitoEmail?: CognitoSesEmail;
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
   * The async renderer's memory in MiB (async renders, large documents).
   * @default 3008: the sync renderer's 2,048 MiB holds 5 MiB of HTML (1,152 table pages) at a
   * ~1.2 GiB peak (renderer-function.ts); an async 1,000-page report peaked at the figure in the
   * README (Async renders), and more memory buys CPU (two vCPUs from 3,538 MiB): a large print is
   * CPU-bound in Chromium's renderer process.
   */
  readonly renderWorkerMemorySizeMiB?: number;
  /**
   * Print tagged (accessible) PDFs.
   * @default false (see renderer-function.ts)
   */
  readonly taggedPdf?: boolean;
  /**
   * An existing SNS topic that every alarm notifies (lib/service-monitoring.ts lists them). One of
   * `alarmTopicArn`, `alarmEmail` or `alarms: 'none'` is required.
   * @default none: then `alarmEmail` or `alarms: 'none'` must be given
   */
  readonly alarmTopicArn?: string;
  /**
   * An email address that every alarm notifies, through a topic this stack creates (or through
   * `alarmTopicArn`'s, when both are given). The address must confirm the subscription first.
   * @default none: then `alarmTopicArn` or `alarms: 'none'` must be given
   */
  readonly alarmEmail?: string;
  /**
   * `'none'`: synthesize without an alarm destination (throwaway stacks, previews). The alarms and
   * the CloudWatch dashboard are still made; their notifications go nowhere.
   * @default alarms notify `alarmTopicArn` and/or `alarmEmail`, one of which is then required
   */
  readonly alarms?: 'none';
  /**
   * API-wide request rate (per second) and burst, enforced by API Gateway before any Lambda runs;
   * the per-account plan limits are enforced by the API itself.
   * @default 50 requests a second, bursts of 100 (DEFAULT_API_THROTTLE, where the reasoning is)
   */
  readonly apiThrottle?: ApiThrottle;
  /**
   * Origins browsers may call the API from, e.g. `["https://dashboard.example.com"]`: exact
   * `https://` origins (lib/cors.ts).
   * @default none: no CORS
   */
  readonly corsAllowedOrigins?: readonly string[];
  /**
   * The dashboard for signed-in users (lib/dashboard/): a static site on CloudFront, a Cognito
   * domain with managed login and an app client for it; the API accepts that client's tokens and
   * allows the site's origin (CORS). It adds a domain and a client to the stack's own user pool.
   * @default true, unless `existingUserPool` is given
   */
  readonly dashboard?: boolean;
  /**
   * What the dashboard's usage page says about changing plans: plain text, e.g. whom to write to or
   * a page's address (`-c dashboardPlanContact="Write to billing@example.com"`).
   * @default a line saying that the deployment's operator changes plans
   */
  readonly dashboardPlanContact?: string;
  /**
   * The renderer's reserved concurrency, which also caps it; `false` reserves none (for accounts
   * whose concurrency limit is too small to reserve from).
   * @default 20 (DEFAULT_RENDERER_RESERVED_CONCURRENCY, where the reasoning is)
   */
  readonly rendererReservedConcurrency?: number | false;
  /**
   * The sync renderer's provisioned concurrency: environments kept warm, billed whether used or not
   * (RendererFunctionProps.provisionedConcurrency; docs/deploy.md, Cold start).
   * @default 0
   */
  readonly rendererProvisionedConcurrency?: number;
  /**
   * The API on its own host name (lib/api-domain.ts): an API Gateway custom domain with TLS 1.2 at
   * least, the default execute-api endpoint turned off, and the dashboard pointed at it. Needs
   * `certificateArn` or `hostedZone`.
   * @default none: the API answers on its execute-api URL
   */
  readonly customDomain?: CustomDomainSettings;
  /**
   * The queue table and the consumer table the stack is made from.
   * @default the service's (functions/queues.ts, functions/consumers.ts); a test adds a fixture's
   */
  readonly asyncTables?: {
    readonly queues: readonly QueueDeclaration[];
    readonly consumers: readonly ConsumerDeclaration[];
  };
}

export class AlarmDestinationError extends Error {
  constructor() {
    super(
      'alarms: the alarms would notify nobody. Give an address (-c alarmEmail=ops@example.com) or an existing ' +
        "SNS topic (-c alarmTopicArn=arn:aws:sns:<region>:<account>:<topic>), in cdk.json's context or on the " +
        'command line; or, for a stack nobody operates, opt out with -c alarms=none.',
    );
    this.name = 'AlarmDestinationError';
  }
}

/** A stack that nobody hears from is refused at synth, unless it says so (`alarms: 'none'`). */
const checkAlarmDestination = (props: PdfServiceStackProps): void => {
  if (props.alarms !== undefined && props.alarms !== 'none') {
    throw new Error(
      `alarms: the only value is "none" (no alarm destination), got ${JSON.stringify(props.alarms)}`,
    );
  }
  if (!props.alarmTopicArn && !props.alarmEmail && props.alarms !== 'none') throw new AlarmDestinationError();
};

export class PdfServiceStack extends Stack {
  readonly api: ServiceApi;
  readonly renderer: RendererFunction;
  readonly table: ServiceTable;
  /**
   * The usage events' bus (issue 39; docs/billing.md): one event per billable job, put by the
   * usage-events consumer alone. An operator routes them with rules of their own (docs/deploy.md).
   */
  readonly usageEventBus: EventBus;
  readonly pdfBucket: PdfBucket;
  readonly userPool: ServiceUserPool;
  readonly apiKeySecret: ApiKeySecret;
  /** Where every alarm notifies, unless `alarms: 'none'`. */
  readonly alarmTopic?: AlarmTopic;
  /** The alarms the stack adds to the API's and the renderer's own, and the CloudWatch dashboard. */
  readonly monitoring: ServiceMonitoring;
  /** What happens to logs (and log buckets) when the stack is deleted: RETAIN unless `retainData` is false. */
  readonly logRemovalPolicy: RemovalPolicy;
  /** The API's custom domain, when `customDomain` is given. */
  readonly apiDomain?: ApiDomain;
  /** The dashboard, unless `dashboard` is false. */
  readonly dashboard?: Dashboard;
  /** Every queue of the queue table (functions/queues.ts), by its name there. */
  readonly queues: ReadonlyMap<string, ServiceQueue>;
  /** Every consumer of the consumer table (functions/consumers.ts), by its name there. */
  readonly consumers: ReadonlyMap<string, ServiceConsumer>;
  /** The renderer of async jobs, invoked by the render queue consumer. */
  readonly asyncRenderer: RendererFunction;

  constructor(scope: Construct, id: string, props: PdfServiceStackProps = {}) {
    super(scope, id, props);
    checkAlarmDestination(props);
    const settings = resolveSettings(props);
    const retain = props.retainData ?? true;
    const logRemovalPolicy = retain ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;
    this.logRemovalPolicy = logRemovalPolicy;

    this.table = new ServiceTable(this, 'Table', { retainOnDelete: retain });
    this.pdfBucket = new PdfBucket(this, 'PdfBucket', {
      pdfRetentionDays: settings.pdfRetentionDays,
      retainOnDelete: retain,
    });
    this.userPool = new ServiceUserPool(this, 'Auth', {
      existing: props.existingUserPool,
      requireMfa: props.requireMfa,
      email: props.cognitoEmail,
      retainOnDelete: retain,
    });
    this.apiKeySecret = new ApiKeySecret(this, 'ApiKeySecret', { retainOnDelete: retain });
    if (props.dashboard ?? props.existingUserPool === undefined) {
      if (!this.userPool.userPool) {
        throw new Error(
          'dashboard: the dashboard adds a Cognito domain and an app client to the user pool, which it can ' +
            'only do to the pool this stack creates; leave existingUserPool out, or set dashboard to false',
        );
      }
      this.dashboard = new Dashboard(this, 'Dashboard', {
        userPool: this.userPool.userPool,
        removalPolicy: retain ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
      });
    }
    const dashboardOrigins = this.dashboard ? [this.dashboard.origin] : [];
    this.pdfBucket.allowBrowserDownloads(dashboardOrigins);
    this.alarmTopic = AlarmTopic.maybe(this, 'AlarmTopic', {
      existingTopicArn: props.alarmTopicArn,
      email: props.alarmEmail,
      removalPolicy: logRemovalPolicy,
    });
    this.renderer = new RendererFunction(this, 'Renderer', {
      timeoutSeconds: settings.rendererTimeoutSeconds,
      memorySizeMiB: props.rendererMemorySizeMiB,
      taggedPdf: props.taggedPdf,
      reservedConcurrency: props.rendererReservedConcurrency,
      provisionedConcurrency: props.rendererProvisionedConcurrency,
      logRemovalPolicy,
    });
    // Async renders get a renderer of their own: the same code and logs-only role as the sync one,
    // sized for large documents, its concurrency bounded by the consumer's event source mapping.
    this.asyncRenderer = new RendererFunction(this, 'AsyncRenderer', {
      purpose: 'async',
      layer: this.renderer.layer,
      timeoutSeconds: settings.asyncRendererTimeoutSeconds,
      memorySizeMiB: props.renderWorkerMemorySizeMiB ?? 3008,
      taggedPdf: props.taggedPdf,
      reservedConcurrency: false,
      logRemovalPolicy,
    });
    this.usageEventBus = new EventBus(this, 'UsageEventBus', {
      description:
        'Usage events: one per billable job (source pdf-service.usage, detail-type Usage Recorded)',
    });
    const tables = props.asyncTables ?? { queues: serviceQueues, consumers: serviceConsumers };
    this.queues = new Map(
      tables.queues.map((q) => [
        q.name,
        new ServiceQueue(this, queueConstructId(q), {
          declaration: q,
          settings: settings.settings,
          consumerTimeoutSeconds: consumerOf(q, tables.consumers).timeoutSeconds(settings.settings),
        }),
      ]),
    );
    this.consumers = new Map(
      tables.consumers.map((c) => [
        c.name,
        new ServiceConsumer(this, consumerConstructId(c), {
          declaration: c,
          settings: settings.settings,
          parts: {
            table: this.table,
            pdfBucket: this.pdfBucket,
            apiKeySecret: this.apiKeySecret,
            asyncRenderer: this.asyncRenderer.function,
            queues: this.queues,
            usageEventBus: this.usageEventBus,
          },
          environment: settings.environment,
          logRemovalPolicy,
        }),
      ]),
    );
    this.api = new ServiceApi(this, 'Api', {
      webhookQueue: this.queueBoundAs('webhookQueue'),
      table: this.table,
      pdfBucket: this.pdfBucket,
      renderer: this.renderer.invokeTarget,
      renderQueue: this.queueBoundAs('renderQueue'),
      batchOutputQueue: this.queueBoundAs('batchOutputQueue'),
      deliveryQueue: this.queueBoundAs('deliveryQueue'),
      userPool: this.dashboard
        ? {
            userPoolId: this.userPool.userPoolId,
            userPoolClientId: this.userPool.userPoolClientId,
            additionalClientIds: [this.dashboard.clientId],
          }
        : this.userPool,
      apiKeySecret: this.apiKeySecret,
      environment: settings.environment,
      throttle: props.apiThrottle,
      corsAllowedOrigins: [...(props.corsAllowedOrigins ?? []), ...dashboardOrigins],
      logRemovalPolicy,
      disableExecuteApiEndpoint: props.customDomain !== undefined,
    });
    if (props.customDomain) {
      this.apiDomain = new ApiDomain(this, 'ApiDomain', {
        ...props.customDomain,
        httpApi: this.api.httpApi,
        stage: this.api.stage,
      });
    }
    const reserved = props.rendererReservedConcurrency ?? DEFAULT_RENDERER_RESERVED_CONCURRENCY;
    this.monitoring = new ServiceMonitoring(this, 'Monitoring', {
      api: this.api,
      renderer: this.renderer,
      renderQueue: this.queues.get(renderQueue.name),
      rendererTimeoutSeconds: settings.rendererTimeoutSeconds,
      rendererReservedConcurrency: reserved === false ? undefined : reserved,
      otherAlarms: this.alarmsWithin(this),
    });

    this.dashboard?.deploySite({
      apiUrl: this.apiUrl,
      apiOrigin: `https://${this.apiHost}`,
      pdfBucketOrigin: `https://${this.pdfBucket.bucket.bucketRegionalDomainName}`,
      planContact: props.dashboardPlanContact,
    });
    // `/` on the API leads to the dashboard, as it does on the local stack.
    if (this.dashboard) {
      this.api.functions
        .get(FALLBACK_RESOURCE)
        ?.addEnvironmentVariables({ [FALLBACK_VARIABLES.dashboardUrl]: this.dashboard.url });
    }

    new CfnOutput(this, 'ApiUrl', {
      value: this.apiUrl,
      description: 'Base URL of the API (paths start with v1/)',
    });
    if (this.dashboard) {
      new CfnOutput(this, 'DashboardUrl', {
        value: this.dashboard.url,
        description: 'The dashboard: sign in with a user of the user pool',
      });
    }
    new CfnOutput(this, 'UserPoolId', { value: this.userPool.userPoolId });
    new CfnOutput(this, 'UserPoolClientId', { value: this.userPool.userPoolClientId });
    new CfnOutput(this, 'ApiKeysUrl', {
      value: `${this.apiUrl}v1/api-keys`,
      description:
        'Where API keys are made: POST {"name": "..."} with a session token (Authorization: Bearer <Cognito ID token>); the key is in that answer only',
    });
    new CfnOutput(this, 'PdfBucketName', { value: this.pdfBucket.bucketName });
    new CfnOutput(this, 'TableName', { value: this.table.tableName });
    new CfnOutput(this, 'UsageEventBusName', { value: this.usageEventBus.eventBusName });
    new CfnOutput(this, 'RendererFunctionName', { value: this.renderer.function.functionName });
    new CfnOutput(this, 'RenderQueueUrl', { value: this.queueBoundAs('renderQueue').queueUrl });

    this.acknowledgeGrants();
    this.wireAlarms();
  }

  /** Every alarm under `scope`, in the order they were made. */
  private alarmsWithin(scope: Construct): Alarm[] {
    return scope.node.findAll().filter((c): c is Alarm => c instanceof Alarm);
  }

  /**
   * Every alarm of the stack, whichever construct made it, notifies the one destination when it
   * fires and again when it recovers (OK), so that nobody has to look whether it is still on.
   */
  private wireAlarms(): void {
    if (!this.alarmTopic) return;
    for (const alarm of this.alarmsWithin(this)) {
      alarm.addAlarmAction(this.alarmTopic.action);
      alarm.addOkAction(this.alarmTopic.action);
    }
  }

  /** The queue whose URL `binding` carries (functions/queues.ts). */
  queueBoundAs(binding: QueueDeclaration['binding']): ServiceQueue['queue'] {
    const found = [...this.queues.values()].find((q) => q.declaration.binding === binding);
    if (!found) throw new Error(`no queue is bound as ${binding} (functions/queues.ts)`);
    return found.queue;
  }

  /** A consumer of the consumer table, by its name there. */
  consumer(name: string): ServiceConsumer {
    const found = this.consumers.get(name);
    if (!found) throw new Error(`no consumer "${name}" (functions/consumers.ts)`);
    return found;
  }

  /** A queue of the queue table, by its name there. */
  queue(name: string): ServiceQueue {
    const found = this.queues.get(name);
    if (!found) throw new Error(`no queue "${name}" (functions/queues.ts)`);
    return found;
  }

  /** The API's base URL (ends with a slash): its custom domain's when it has one. */
  get apiUrl(): string {
    return this.apiDomain?.url ?? this.api.url;
  }

  /** The API's host, as a CloudFront origin: its custom domain, or its execute-api host. */
  get apiHost(): string {
    return this.apiDomain?.host ?? `${this.api.httpApi.apiId}.execute-api.${this.region}.${this.urlSuffix}`;
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
      [`Resource::${arnOf(this.pdfBucket.bucket)}/orders/*`]:
        "Async renders' orders are orders/<accountId>/<jobId>.json, known only per job; the API may only put " +
        'them, the render queue consumer only get and delete them, under the orders/ prefix of this bucket.',
      [`Resource::${arnOf(this.pdfBucket.bucket)}/assets/*`]:
        'Account assets are assets/<accountId>/<uploadId>, known only per upload; only the assets function ' +
        "may put, get and delete them, and what renders only get them (to sign the renderer's links), under the assets/ prefix of this bucket.",
      [`Resource::${arnOf(this.renderer.function)}:*`]:
        "grantInvoke names the renderer and its versions (<renderer>:*): still this one function's code only.",
      [`Resource::${arnOf(this.asyncRenderer.function)}:*`]:
        "grantInvoke names the async renderer and its versions (<renderer>:*): still this one function's code only.",
    };
    for (const fn of [
      ...this.api.functions.values(),
      ...[...this.consumers.values()].map((c) => c.function),
    ]) {
      for (const [finding, reason] of Object.entries(reasons)) {
        Validations.of(fn.role ?? fn).acknowledge({ id: `AwsSolutions-IAM5[${finding}]`, reason });
      }
    }
  }
}
