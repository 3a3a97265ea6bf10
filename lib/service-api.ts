/**
 * The HTTP API: one route per declared route (functions/routes.ts, which the local server reads
 * too), one Lambda per resource, wired with what its declaration says it needs (wiringOf) and
 * nothing else, and the `$default` route to the fallback function so that an unknown path or
 * method still answers with the contract's error body.
 *
 * Authorization is not done by API Gateway: API keys and Cognito ID tokens both arrive as
 * `Authorization: Bearer …` and the handlers tell them apart (see the AwsSolutions-APIG4 note).
 */

import { join } from 'node:path';
import { Duration, RemovalPolicy, Token, Validations } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import {
  CorsHttpMethod,
  type CorsPreflightOptions,
  HttpApi,
  HttpMethod,
  type HttpStage,
  LogGroupLogDestination,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { Alarm, ComparisonOperator, MathExpression, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { type AnyResource, routesOf, tableAccessOf, wiringOf } from '../functions/route-declaration.js';
import { FALLBACK_RESOURCE, resources } from '../functions/routes.js';
import { BINDING_NAMES, type Binding } from '../functions/wiring.js';
import { corsPolicy } from './cors.js';
import type { PdfBucket } from './pdf-bucket.js';
import { withRunbook } from './runbook.js';
import { PROJECT_ROOT, ServiceFunction } from './service-function.js';
import { PDF_FUNCTION_TIMEOUT_SECONDS } from './service-settings.js';
import type { UserPoolIds } from './user-pool.js';

export interface ServiceApiProps {
  readonly table: ITable;
  readonly pdfBucket: PdfBucket;
  readonly renderer: IFunction;
  /** The render queue: async renders are sent there (with their orders in the PDF bucket). */
  readonly renderQueue: IQueue;
  readonly batchOutputQueue: IQueue;
  readonly deliveryQueue: IQueue;
  readonly userPool: UserPoolIds;
  readonly apiKeySecret: ISecret;
  /** The webhook queue: the functions that send events (webhooks, pdf) may send to it. */
  readonly webhookQueue: IQueue;
  /** Settings every API function reads (plans, limits, budget, retention). */
  readonly environment: Readonly<Record<string, string>>;
  /**
   * Steady-state requests per second and burst for the whole API, before any Lambda runs.
   * @default DEFAULT_API_THROTTLE: 50 requests a second, bursts of 100
   */
  readonly throttle?: ApiThrottle;
  /**
   * Origins browsers may call the API from (the dashboard's): API Gateway answers their CORS
   * preflights and lets them read the answers (lib/cors.ts).
   * @default none: no CORS, browsers on other origins cannot call the API
   */
  readonly corsAllowedOrigins?: readonly string[];
  /**
   * Turn the execute-api endpoint off, when a custom domain is the way in.
   * @default false
   */
  readonly disableExecuteApiEndpoint?: boolean;
  /** @default RemovalPolicy.RETAIN */
  readonly logRemovalPolicy?: RemovalPolicy;
}

/** API Gateway's token bucket: `rateLimit` requests a second, and up to `burstLimit` at once. */
export interface ApiThrottle {
  readonly rateLimit: number;
  readonly burstLimit: number;
}

/**
 * The stage's default throttle. Every request, authenticated or not, costs an API Gateway request
 * and a Lambda invoke: at API Gateway's account-level 10,000 a second a flood would cost about
 * $1,000 a day in requests alone; at 50 a second it costs at most about $6 a day (4.3 million
 * requests: $4.32 of API Gateway, $0.86 of Lambda requests, about $1 of Lambda time at 20 ms
 * each). 50 a second is the default plans' busiest use many times over (pro: 300 renders a
 * minute, 5 a second, per account), and the renderer's default concurrency (renderer-function.ts)
 * renders about as many. The burst of 100 lets a batch of requests start at once. Above these,
 * API Gateway answers 429 with its own body (`{"message":"Too Many Requests"}`).
 */
export const DEFAULT_API_THROTTLE: ApiThrottle = { rateLimit: 50, burstLimit: 100 };

const checkThrottle = ({ rateLimit, burstLimit }: ApiThrottle): ApiThrottle => {
  const positive = (n: unknown) => typeof n === 'number' && Number.isFinite(n) && n > 0;
  if (!positive(rateLimit) || !positive(burstLimit) || !Number.isInteger(burstLimit)) {
    throw new Error(
      `apiThrottle must be {"rateLimit": <requests a second, above 0>, "burstLimit": <a whole number, ` +
        `above 0>}, got ${JSON.stringify({ rateLimit, burstLimit })}`,
    );
  }
  return { rateLimit, burstLimit };
};

const corsPreflightOf = (origins: readonly string[]): CorsPreflightOptions | undefined => {
  // The dashboard's origin is its distribution's domain, a token until deploy: checked by nobody
  // at synth, built by the stack itself. Every literal origin is checked.
  const policy = corsPolicy(
    origins.filter((o) => !Token.isUnresolved(o)),
    origins.filter((o) => Token.isUnresolved(o)),
  );
  if (!policy) return undefined;
  return {
    allowOrigins: [...policy.allowOrigins],
    allowMethods: policy.allowMethods.map((m) => CorsHttpMethod[m as keyof typeof CorsHttpMethod]),
    allowHeaders: [...policy.allowHeaders],
    exposeHeaders: [...policy.exposeHeaders],
    maxAge: Duration.seconds(policy.maxAgeSeconds),
  };
};

/**
 * Resources whose functions parse templates (a save, a render's or a batch's check): a large
 * template is parsed in a worker thread (functions/templating/parse-pool.ts), whose script rides
 * beside the handler.
 */
const PARSING_RESOURCES = new Set(['templates', 'pdf', 'batches', 'merges']);
const PARSE_WORKER_BUNDLES = {
  'parse-worker.cjs': join(PROJECT_ROOT, 'functions', 'templating', 'parse-worker.ts'),
};

export class ServiceApi extends Construct {
  readonly httpApi: HttpApi;
  readonly stage: HttpStage;
  /** More than 5% of at least 20 requests answered 5xx, in 2 of 3 five-minute periods. */
  readonly serverErrorsAlarm: Alarm;
  /** The API functions by resource, the fallback included. */
  readonly functions: ReadonlyMap<string, ServiceFunction>;

  constructor(scope: Construct, id: string, props: ServiceApiProps) {
    super(scope, id);
    const functions = new Map<string, ServiceFunction>();
    for (const r of resources) functions.set(r.name, this.createFunction(r, props));
    // The fallback answers 404/405 from the route table alone: no settings, no grants.
    const fallback = new ServiceFunction(this, `${FALLBACK_RESOURCE}Function`, {
      resource: FALLBACK_RESOURCE,
      description: 'Answers routes the API does not have (404, 405)',
      memorySizeMiB: 256,
      logRemovalPolicy: props.logRemovalPolicy,
    });
    functions.set(FALLBACK_RESOURCE, fallback);
    this.functions = functions;

    this.httpApi = new HttpApi(this, 'HttpApi', {
      description: 'PDF render service',
      defaultIntegration: new HttpLambdaIntegration('FallbackIntegration', fallback),
      // The stage is made below, with access logs and throttling.
      createDefaultStage: false,
      corsPreflight: corsPreflightOf(props.corsAllowedOrigins ?? []),
      disableExecuteApiEndpoint: props.disableExecuteApiEndpoint,
    });
    for (const r of resources) {
      const integration = new HttpLambdaIntegration(
        `${r.name}Integration`,
        functions.get(r.name) as IFunction,
      );
      for (const route of routesOf(r)) {
        this.httpApi.addRoutes({ path: route.path, methods: [HttpMethod[route.method]], integration });
      }
    }

    const accessLogs = new LogGroup(this, 'AccessLogs', {
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: props.logRemovalPolicy ?? RemovalPolicy.RETAIN,
    });
    this.stage = this.httpApi.addStage('DefaultStage', {
      stageName: '$default',
      autoDeploy: true,
      throttle: checkThrottle(props.throttle ?? DEFAULT_API_THROTTLE),
      accessLogSettings: {
        destination: new LogGroupLogDestination(accessLogs),
        format: AccessLogFormat.custom(
          JSON.stringify({
            requestId: '$context.requestId',
            routeKey: '$context.routeKey',
            status: '$context.status',
            latencyMs: '$context.responseLatency',
            integrationLatencyMs: '$context.integrationLatency',
            integrationError: '$context.integrationErrorMessage',
            ip: '$context.identity.sourceIp',
            userAgent: '$context.identity.userAgent',
            requestTime: '$context.requestTime',
            responseLength: '$context.responseLength',
          }),
        ),
      },
    });

    // A rate, not a count: some 5xx are the caller's page (a render that times out answers 504).
    // Below 20 requests a period one failure would be 5%, so quiet periods do not alarm.
    const period = Duration.minutes(5);
    this.serverErrorsAlarm = new Alarm(this, 'ServerErrorsAlarm', {
      alarmDescription: withRunbook(
        'More than 5% of API requests answered 5xx (renderer failures, timeouts, internal errors): ' +
          "see the access logs and the functions' logs",
        'api-server-errors',
      ),
      metric: new MathExpression({
        expression: 'IF(requests >= 20, 100 * errors / requests, 0)',
        usingMetrics: {
          errors: this.stage.metricServerError({ period }),
          requests: this.stage.metricCount({ period }),
        },
        label: 'API 5xx (% of requests)',
        period,
      }),
      threshold: 5,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    Validations.of(this.httpApi).acknowledge({
      id: 'AwsSolutions-APIG4',
      reason:
        'Every route authenticates in its Lambda: the same Authorization: Bearer header carries either an ' +
        'API key (pdf_live_…, checked against HMAC digests in DynamoDB) or a Cognito ID token (verified with ' +
        'aws-jwt-verify). A JWT authorizer would reject API keys, and the contract needs its own error body ' +
        'and precedence (404/405 before 401), which API Gateway authorizers cannot give.',
    });
  }

  /** The URL clients call (ends with a slash). */
  get url(): string {
    return this.stage.url;
  }

  /** A resource's function, given exactly what its declaration needs. */
  private createFunction(r: AnyResource, props: ServiceApiProps): ServiceFunction {
    const wiring = wiringOf(r);
    const fn = new ServiceFunction(this, `${r.name}Function`, {
      resource: r.name,
      description: r.description,
      // A function that waits for the renderer (see service-settings.ts for the arithmetic).
      timeout: wiring.renderer ? Duration.seconds(PDF_FUNCTION_TIMEOUT_SECONDS) : undefined,
      logRemovalPolicy: props.logRemovalPolicy,
      ...(PARSING_RESOURCES.has(r.name) ? { workerBundles: PARSE_WORKER_BUNDLES } : {}),
    });
    fn.addEnvironmentVariables(props.environment);
    // Every binding of the wiring declaration (functions/wiring.ts) has its variables and grant here.
    const binders = {
      table: () => {
        const access = tableAccessOf(r);
        if (!access) throw new Error(`${r.name}: bound to the table without routes`);
        return fn.bindTableAccess(props.table, access);
      },
      userPool: () => fn.bindUserPool(props.userPool),
      apiKeySecret: () => fn.bindApiKeySecret(props.apiKeySecret),
      pdfBucket: () =>
        r.needs.pdfBucket ? fn.bindPdfBucket(props.pdfBucket) : fn.bindBucketName(props.pdfBucket),
      renderer: () => fn.bindRenderer(props.renderer),
      webhookQueue: () => fn.bindWebhookQueue(props.webhookQueue),
      renderQueue: () => {
        props.pdfBucket.grantWriteOrders(fn);
        return fn.bindRenderQueue(props.renderQueue);
      },
      batchOutputQueue: () => fn.bindBatchOutputQueue(props.batchOutputQueue),
      deliveryQueue: () => fn.bindDeliveryQueue(props.deliveryQueue),
      kmsSigningKeys: () => fn.bindKmsSigningKeys(),
      destinationRoles: () => fn.bindDestinationRoles(),
      usageEventBus: () => {
        throw new Error(`${r.name}: no route publishes usage events (the usage-events consumer does)`);
      },
    } satisfies Record<Binding, () => ServiceFunction>;
    for (const binding of BINDING_NAMES) if (wiring[binding]) binders[binding]();
    if (r.needs.assets) props.pdfBucket.grantAssets(fn, r.needs.assets);
    return fn;
  }
}
