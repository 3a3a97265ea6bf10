/**
 * The HTTP API: one route per entry of the route table (functions/routes.ts, which the local
 * server reads too), one Lambda per resource in it, and the `$default` route to the fallback
 * function so that an unknown path or method still answers with the contract's error body.
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
import { apiResources, routes } from '../functions/routes.js';
import type { PdfBucket } from './pdf-bucket.js';
import { ServiceFunction } from './service-function.js';
import { PDF_FUNCTION_TIMEOUT_SECONDS } from './service-settings.js';
import type { UserPoolIds } from './user-pool.js';

/** Answers `$default`: every path or method the route table does not have. */
export const FALLBACK_RESOURCE = 'fallback';
/** The resource that renders: it signs PDF URLs and invokes the renderer. */
export const RENDERING_RESOURCE = 'pdf';
/** The resource that issues API keys (computing their digests), besides those that accept them. */
export const API_KEY_ISSUING_RESOURCE = 'api-keys';

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
    for (const resource of [...apiResources(), FALLBACK_RESOURCE]) {
      functions.set(resource, this.createFunction(resource, props));
    }
    this.functions = functions;

    const fallback = functions.get(FALLBACK_RESOURCE) as ServiceFunction;
    this.httpApi = new HttpApi(this, 'HttpApi', {
      description: 'PDF render service',
      defaultIntegration: new HttpLambdaIntegration('FallbackIntegration', fallback),
      // The stage is made below, with access logs and throttling.
      createDefaultStage: false,
    });
    const integrations = new Map<string, HttpLambdaIntegration>();
    for (const route of routes) {
      let integration = integrations.get(route.resource);
      if (!integration) {
        integration = new HttpLambdaIntegration(
          `${route.resource}Integration`,
          functions.get(route.resource) as IFunction,
        );
        integrations.set(route.resource, integration);
      }
      this.httpApi.addRoutes({ path: route.path, methods: [HttpMethod[route.method]], integration });
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

  private createFunction(resource: string, props: ServiceApiProps): ServiceFunction {
    const rendering = resource === RENDERING_RESOURCE;
    const fallback = resource === FALLBACK_RESOURCE;
    const fn = new ServiceFunction(this, `${resource}Function`, {
      resource,
      description: fallback ? 'Answers routes the API does not have (404, 405)' : `The ${resource} API`,
      // The pdf function waits for the renderer (see service-settings.ts for the arithmetic).
      timeout: rendering ? Duration.seconds(PDF_FUNCTION_TIMEOUT_SECONDS) : undefined,
      // The fallback only matches a path against the route table.
      memorySizeMiB: fallback ? 256 : undefined,
      logRemovalPolicy: props.logRemovalPolicy,
    });
    // The fallback answers 404/405 from the route table alone: no settings, no grants.
    if (fallback) return fn;
    const acceptsApiKeys = routes.some((r) => r.resource === resource && r.credentials.includes('apiKey'));
    fn.bindTable(props.table)
      .bindPdfBucket(props.pdfBucket, rendering ? 'presign' : 'nameOnly')
      .bindUserPool(props.userPool)
      .addEnvironmentVariables(props.environment);
    if (rendering) fn.bindRenderer(props.renderer);
    if (acceptsApiKeys || resource === API_KEY_ISSUING_RESOURCE) fn.bindApiKeySecret(props.apiKeySecret);
    return fn;
  }
}
