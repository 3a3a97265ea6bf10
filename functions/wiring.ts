/**
 * The wiring contract between the deployables, declared once: which bindings an API resource's
 * Lambda can have and the environment variables each sets, the renderer function's own variables,
 * and those only the local stack sets. Three sides read it:
 * - the CDK stack (lib/service-function.ts, lib/service-api.ts, lib/renderer-function.ts) writes
 *   each binding's variables together with its IAM grant;
 * - the handlers (functions/core/config.ts) read the same variables back, for the bindings their
 *   resource's wiring (route-declaration.ts, wiringOf) gives them;
 * - the local stack (lib/local/stack.ts) sets them from its emulators, per resource, the same way.
 * Like routes.ts, settings.ts and table.ts this is data, so it imports nothing.
 */

/**
 * Each binding's variables, by the value they carry. A resource gets a binding's variables only
 * when its wiring has that binding (route-declaration.ts).
 */
export const BINDINGS = {
  /** The service table (TABLE_NAME), read and written. */
  table: { tableName: 'TABLE_NAME' },
  /** The Cognito user pool whose ID tokens are accepted, and its app clients (comma-separated). */
  userPool: { userPoolId: 'COGNITO_USER_POOL_ID', clientIds: 'COGNITO_CLIENT_ID' },
  /** The Secrets Manager secret that holds the API-key HMAC key. */
  apiKeySecret: { secretId: 'API_KEY_SECRET_ID' },
  /** The PDF bucket, for presigned GET and PUT URLs. */
  pdfBucket: { bucketName: 'BUCKET_NAME' },
  /** The renderer Lambda, invoked synchronously. */
  renderer: { functionName: 'RENDERER_FUNCTION_NAME' },
  /** The webhook queue (SQS), which the webhook sender consumes: events and retries are sent to it. */
  webhookQueue: { queueUrl: 'WEBHOOK_QUEUE_URL' },
  /** The render queue (SQS): async renders' messages, sent by the API and the sweeper. */
  renderQueue: { queueUrl: 'RENDER_QUEUE_URL' },
  /** The batch output queue (SQS): a completed batch whose merged PDF or ZIP is to be built. */
  batchOutputQueue: { queueUrl: 'BATCH_OUTPUT_QUEUE_URL' },
  /** The delivery queue (SQS): a completed job's copy into its destination, one attempt a message. */
  deliveryQueue: { queueUrl: 'DELIVERY_QUEUE_URL' },
  /**
   * The public half of the deployment's KMS signing keys (kms:GetPublicKey on keys tagged
   * SIGNING_KEY_TAG): no variable, the keys are named at run time.
   */
  kmsSigningKeys: {},
  /** The stack's EventBridge bus of usage events (issue 39): the usage event publisher puts to it. */
  usageEventBus: { eventBusName: 'USAGE_EVENT_BUS_NAME' },
  /**
   * Customers' roles of destinations (issue 36): sts:AssumeRole on roles in other accounts, only
   * with an external id of DESTINATION_EXTERNAL_ID_PREFIX. No variable: the roles are named at run time.
   */
  destinationRoles: {},
} as const;

export type Binding = keyof typeof BINDINGS;
export const BINDING_NAMES = Object.keys(BINDINGS) as Binding[];

/** What a binding's variables carry: e.g. `{ tableName: 'pdf-service-local' }` for `table`. */
export type BindingValues<B extends Binding> = { readonly [K in keyof (typeof BINDINGS)[B]]: string };

/** The environment variables that bind `binding` to `values`. */
export const bindingEnvironment = <B extends Binding>(
  binding: B,
  values: BindingValues<B>,
): Record<string, string> => {
  const variables = BINDINGS[binding] as Readonly<Record<string, string>>;
  const environment: Record<string, string> = {};
  for (const [key, name] of Object.entries(variables)) {
    environment[name] = (values as Readonly<Record<string, string>>)[key] as string;
  }
  return environment;
};

/**
 * What the local stack sets in place of, or beside, a binding's cloud variables: the emulators'
 * endpoints and credentials, the API-key HMAC key itself (the cloud reads it from Secrets
 * Manager), and a JWKS file (the cloud's verifier fetches the pool's keys over https).
 */
export const LOCAL_VARIABLES = {
  dynamoDbEndpoint: 'DYNAMODB_ENDPOINT',
  s3Endpoint: 'S3_ENDPOINT',
  /** The local SQS server (lib/local/sqs); the SDK's own name for an SQS endpoint. */
  sqsEndpoint: 'AWS_ENDPOINT_URL_SQS',
  /** Tests only: an endpoint that answers Lambda Invoke (the bundle smoke test). */
  lambdaEndpoint: 'LAMBDA_ENDPOINT',
  accessKeyId: 'AWS_ACCESS_KEY_ID',
  secretAccessKey: 'AWS_SECRET_ACCESS_KEY',
  apiKeySecret: 'API_KEY_SECRET',
  jwksFile: 'LOCAL_JWKS_FILE',
  /**
   * `host:port` pairs webhooks may be sent to although they are not public (comma-separated), as
   * RENDERER_EGRESS_ALLOW_HOSTS is for pages: the local stack's tests only; never set in the cloud.
   */
  webhookAllowHosts: 'WEBHOOK_EGRESS_ALLOW_HOSTS',
} as const;

/**
 * The fallback function's variables: the dashboard's URL, where `GET /` on the API leads (the stack
 * sets it when it deploys the dashboard; the local stack's own server redirects `/` itself).
 */
export const FALLBACK_VARIABLES = { dashboardUrl: 'DASHBOARD_URL' } as const;

/** The region, as Lambda sets it (and the SDK's older name). */
export const REGION_VARIABLES = { region: 'AWS_REGION', defaultRegion: 'AWS_DEFAULT_REGION' } as const;

/**
 * The renderer function's variables, by the RendererConfig field each carries
 * (functions/core/config.ts): the cloud sets FONTCONFIG_FILE and PDF_TAGGED
 * (lib/renderer-function.ts), the local stack passes on any given to it (lib/local/options.ts).
 */
export const RENDERER_VARIABLES = {
  chromeExecutablePath: 'CHROME_EXECUTABLE_PATH',
  egressAllowHosts: 'RENDERER_EGRESS_ALLOW_HOSTS',
  taggedPdf: 'PDF_TAGGED',
  processModel: 'RENDERER_PROCESS_MODEL',
  maxPageRequests: 'RENDERER_MAX_PAGE_REQUESTS',
  maxConcurrentRenders: 'RENDERER_MAX_CONCURRENT_RENDERS',
  fontconfigFile: 'FONTCONFIG_FILE',
  chromiumPackDir: 'CHROMIUM_PACK_DIR',
  fetchedFonts: 'FETCHED_FONTS',
  memoryBudget: 'RENDERER_MEMORY_BUDGET_MIB',
} as const;

/**
 * Chromium in the renderer's layer (lib/chromium-layer.ts writes it, the renderer's
 * chromium-pack.ts launches it; /opt/chromium in Lambda): everything unpacked, as it runs, so a
 * cold start inflates nothing (issue 42).
 */
export const CHROMIUM_PACK = {
  /** Its directory in the layer. */
  dir: 'chromium',
  /** The Chromium binary, with SwiftShader's GL libraries beside it (Chromium loads them from there). */
  binary: 'chromium',
  /** Amazon Linux 2023's libraries Chromium needs (NSS, expat), first on its LD_LIBRARY_PATH. */
  lib: 'lib',
  /** @sparticuz/chromium's own fonts (Open Sans) and fonts.conf, as its /tmp/fonts. */
  fonts: 'fonts',
} as const;

/**
 * The fonts the layer leaves out (lib/layer-fonts.ts: the CJK fonts, 59 MB), fetched on a page's
 * first need from S3 into /tmp (functions/renderer/fetched-fonts.ts). FETCHED_FONTS_BUCKET: the
 * bucket (in the cloud, the CDK assets bucket); FETCHED_FONTS: JSON, each family's objects,
 * `{"Noto Sans JP": [{"key": "...", "file": "NotoSansJP_400Regular.ttf"}], ...}`.
 */
export const FETCHED_FONTS_VARIABLES = {
  bucket: 'FETCHED_FONTS_BUCKET',
  fonts: 'FETCHED_FONTS',
} as const;

/**
 * The service's own CloudWatch metrics (embedded metric format, functions/core/metrics.ts), which
 * the CDK stack alarms on: their namespace, the `service` dimension Powertools adds, and names.
 */
export const SERVICE_METRICS = {
  namespace: 'PdfRenderService',
  service: 'pdf-render-service',
  /** The webhook sender failed on its own side (the table, the queue): the message comes back. */
  webhookSenderFaults: 'WebhookSenderFaults',
  /** Webhook attempts, by `outcome`: succeeded, retrying (failed, another is due), failed (the last). */
  webhookAttempts: 'WebhookAttempts',
  /**
   * A consumer's run that completed (functions/core/consumer.ts), one a run, by `consumer`: the
   * heartbeat its alarm watches (lib/service-consumer.ts).
   */
  consumerHeartbeat: 'ConsumerHeartbeat',
  /** The dimension that names the consumer on its own metrics. */
  consumerDimension: 'consumer',
} as const;

/**
 * The tag an AWS KMS key carries for the renderers to be allowed kms:Sign with it (issue 34):
 * their role may sign with this account's keys in its region that have it, and with nothing else.
 */
export const SIGNING_KEY_TAG = { key: 'pdf-service:signing', value: 'true' } as const;

/**
 * The prefix of every external id the service generates for a destination's role (issue 36,
 * domain/destinations/destinations.ts): the service's own sts:AssumeRole is allowed only when the
 * request carries an external id that starts so (lib/service-function.ts).
 */
export const DESTINATION_EXTERNAL_ID_PREFIX = 'pdf-service-';
