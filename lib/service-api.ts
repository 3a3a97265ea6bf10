/**
 * The HTTP API: one route per declared route (functions/routes.ts, which the local server reads
 * too), one Lambda per resource, wired with what its declaration says it needs (wiringOf) and
 * nothing else, and the `$default` route to the fallback function so that an unknown path or
 * method still answers with the contract's error body.
 *
 * Authorization is not done by API Gateway: API keys and Cognito ID tokens both arrive as
 * `Authorization: Bearer …` and the handlers tell them apart (see the AwsSolutions-APIG4 note).
 */
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import { HttpApi, HttpMethod, type HttpStage, LogGroupLogDestination } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { type AnyResource, routesOf, wiringOf } from '../functions/route-declaration.js';
import { FALLBACK_RESOURCE, resources } from '../functions/routes.js';
import type { PdfBucket } from './pdf-bucket.js';
import { ServiceFunction } from './service-function.js';
import { PDF_FUNCTION_TIMEOUT_SECONDS } from './service-settings.js';
import type { UserPoolIds } from './user-pool.js';

export interface ServiceApiProps {
  readonly table: ITable;
  readonly pdfBucket: PdfBucket;
  readonly renderer: IFunction;
  readonly userPool: UserPoolIds;
  readonly apiKeySecret: ISecret;
  /** Settings every API function reads (plans, limits, budget, retention). */
  readonly environment: Readonly<Record<string, string>>;
  /**
   * Steady-state requests per second and burst for the whole API, before any Lambda runs.
   * @default API Gateway's account-level limits only
   */
  readonly throttle?: { readonly rateLimit: number; readonly burstLimit: number };
  /** @default RemovalPolicy.RETAIN */
  readonly logRemovalPolicy?: RemovalPolicy;
}

export class ServiceApi extends Construct {
  readonly httpApi: HttpApi;
  readonly stage: HttpStage;
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
      throttle: props.throttle,
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
    });
    fn.addEnvironmentVariables(props.environment);
    if (wiring.table) fn.bindTable(props.table);
    if (wiring.userPool) fn.bindUserPool(props.userPool);
    if (wiring.apiKeySecret) fn.bindApiKeySecret(props.apiKeySecret);
    if (wiring.pdfBucket) fn.bindPdfBucket(props.pdfBucket);
    if (wiring.renderer) fn.bindRenderer(props.renderer);
    return fn;
  }
}
