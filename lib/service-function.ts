/**
 * The one place that holds the defaults of every Lambda in the service: runtime, architecture,
 * memory, timeout, logs, tracing, bundling and base environment. A function is named by its
 * folder under functions/; each `bind*` method sets the environment variable the handler reads
 * together with the IAM grant it needs, so the two cannot drift apart.
 */
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Duration, RemovalPolicy, type Size } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IEventBus } from 'aws-cdk-lib/aws-events';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, type IFunction, type ILayerVersion, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import type { TableAccess } from '../functions/table.js';
import { type Binding, type BindingValues, bindingEnvironment } from '../functions/wiring.js';
import { grantDestinationRoles } from './destination-roles-grant.js';
import type { PdfBucket } from './pdf-bucket.js';
import { grantTaggedSigningKeys } from './signing-keys-grant.js';
import type { UserPoolIds } from './user-pool.js';

/** The repository root: functions/, package-lock.json and node_modules live here. */
export const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The handler module of a resource: `functions/<resource>/handler.ts`, exporting `handler`. */
export const handlerEntry = (resource: string): string =>
  join(PROJECT_ROOT, 'functions', resource, 'handler.ts');

/**
 * The newest Node.js runtime Lambda offers (cdk-nag AwsSolutions-L1 holds us to it). Handlers
 * are plain async functions, so a runtime upgrade is this one line.
 */
export const SERVICE_RUNTIME = Runtime.NODEJS_24_X;

/**
 * Lets bundled CommonJS dependencies call `require` for Node built-ins from inside an ES module
 * bundle; esbuild's generated `__require` shim looks for exactly this binding.
 */
const ESM_REQUIRE_BANNER =
  "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);";

/**
 * Gives a CommonJS bundle a working `import.meta.url` (esbuild would leave it empty), so that code
 * can find files beside it the same way in a bundle of either format (the renderer its templating
 * worker). Used with the define below.
 */
const CJS_IMPORT_META_URL_BANNER =
  "const __import_meta_url = require('node:url').pathToFileURL(__filename).href;";

/** The esbuild that NodejsFunction bundles with (a devDependency: synth works offline). */
const esbuildBin = (): string =>
  join(dirname(createRequire(import.meta.url).resolve('esbuild/package.json')), 'bin', 'esbuild');

const shellQuote = (arg: string): string => `'${arg.replace(/'/g, "'\\''")}'`;

export interface ServiceFunctionProps {
  /** The folder under functions/ whose handler.ts (exporting `handler`) this function runs. */
  readonly resource: string;
  /**
   * The module whose `handler` export the function runs.
   * @default functions/<resource>/handler.ts
   */
  readonly entry?: string;
  readonly description?: string;
  /**
   * Memory in MiB; Lambda allots CPU in proportion to it.
   * @default 1024: JWT verification, HMAC digests, JSON parsing of bodies up to 6 MiB and
   * parsing templates of up to 5 MiB are CPU-bound (templates are executed in the renderer), and
   * one vCPU arrives at 1,769 MiB
   */
  readonly memorySizeMiB?: number;
  /**
   * @default 10 seconds: an API call that is not a render does a few DynamoDB and S3 calls
   */
  readonly timeout?: Duration;
  /**
   * @default ARM_64 (Graviton: cheaper per ms; the bundles are plain JavaScript)
   */
  readonly architecture?: Architecture;
  /**
   * @default Tracing.ACTIVE (X-Ray; this adds xray:PutTraceSegments to the role)
   */
  readonly tracing?: Tracing;
  /** @default one month */
  readonly logRetention?: RetentionDays;
  /** @default no layers */
  readonly layers?: ILayerVersion[];
  /** @default 512 MiB, Lambda's default */
  readonly ephemeralStorageSize?: Size;
  /**
   * Concurrency reserved for (and capping) this function.
   * @default none: the function draws on the account's unreserved concurrency
   */
  readonly reservedConcurrentExecutions?: number;
  /**
   * Module format of the bundle.
   * @default OutputFormat.ESM (index.mjs), so handlers may use top-level await
   */
  readonly format?: OutputFormat;
  /**
   * Packages left out of the bundle and resolved at run time, from a layer.
   * @default none: everything is bundled, the AWS SDK included, so what runs in the cloud is
   * exactly what the tests ran (not whichever SDK version the runtime carries that day)
   */
  readonly externalModules?: string[];
  /**
   * Removal policy of the function's log group.
   * @default RemovalPolicy.RETAIN
   */
  readonly logRemovalPolicy?: RemovalPolicy;
  /**
   * More bundles in the function's asset beside the handler's, for code started as worker threads:
   * output file name (e.g. `worker.cjs`, which fixes its format) → entry file under the project
   * root. Each is bundled on its own with the handler's esbuild settings and no externals, so it
   * holds only what its entry imports.
   * @default none
   */
  readonly workerBundles?: Readonly<Record<string, string>>;
}

export class ServiceFunction extends NodejsFunction {
  /** The folder under functions/ this function runs. */
  readonly resourceName: string;

  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    // The role and log group are created first so the role can be limited to this log group,
    // instead of AWSLambdaBasicExecutionRole's logs:* on every log group in the account.
    const logGroup = new LogGroup(scope, `${id}LogGroup`, {
      retention: props.logRetention ?? RetentionDays.ONE_MONTH,
      removalPolicy: props.logRemovalPolicy ?? RemovalPolicy.RETAIN,
    });
    const role = new Role(scope, `${id}Role`, {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `Runs the ${props.resource} function`,
    });
    const format = props.format ?? OutputFormat.ESM;
    const workerBundles = Object.entries(props.workerBundles ?? {});
    const target = `node${SERVICE_RUNTIME.name.replace(/^nodejs/, '').replace(/\.x$/, '')}`;
    super(scope, id, {
      description: props.description,
      entry: props.entry ?? handlerEntry(props.resource),
      handler: 'handler',
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: join(PROJECT_ROOT, 'package-lock.json'),
      runtime: SERVICE_RUNTIME,
      architecture: props.architecture ?? Architecture.ARM_64,
      memorySize: props.memorySizeMiB ?? 1024,
      timeout: props.timeout ?? Duration.seconds(10),
      tracing: props.tracing ?? Tracing.ACTIVE,
      ephemeralStorageSize: props.ephemeralStorageSize,
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
      layers: props.layers,
      role,
      logGroup,
      environment: {
        // Stack traces point into functions/*.ts rather than into the minified bundle.
        NODE_OPTIONS: '--enable-source-maps',
      },
      bundling: {
        // Local esbuild only: synth must work without Docker and without the network.
        forceDockerBundling: false,
        format,
        banner: format === OutputFormat.ESM ? ESM_REQUIRE_BANNER : CJS_IMPORT_META_URL_BANNER,
        define: format === OutputFormat.ESM ? undefined : { 'import.meta.url': '__import_meta_url' },
        mainFields: format === OutputFormat.ESM ? ['module', 'main'] : ['main', 'module'],
        externalModules: props.externalModules ?? [],
        minify: true,
        sourceMap: true,
        sourcesContent: false,
        commandHooks:
          workerBundles.length === 0
            ? undefined
            : {
                beforeBundling: () => [],
                beforeInstall: () => [],
                afterBundling: (inputDir, outputDir) =>
                  workerBundles.map(([outfile, entry]) =>
                    [
                      esbuildBin(),
                      '--bundle',
                      join(inputDir, relative(PROJECT_ROOT, entry)),
                      '--platform=node',
                      `--target=${target}`,
                      `--format=${outfile.endsWith('.mjs') ? 'esm' : 'cjs'}`,
                      // ES builds first: a UMD main (jsonc-parser's) requires its parts at run time, which no bundle holds.
                      '--main-fields=module,main',
                      '--minify',
                      '--sourcemap',
                      '--sources-content=false',
                      '--log-level=warning',
                      `--outfile=${join(outputDir, outfile)}`,
                    ]
                      .map(shellQuote)
                      .join(' '),
                  ),
              },
      },
    });
    this.resourceName = props.resource;
    logGroup.grantWrite(role);
  }

  /** A binding's variables, as functions/wiring.ts declares them (the grant is the caller's). */
  private bindVariables<B extends Binding>(binding: B, values: BindingValues<B>): this {
    return this.addEnvironmentVariables(bindingEnvironment(binding, values));
  }

  /** TABLE_NAME, and read/write access to the table's items and indexes. */
  bindTable(table: ITable): this {
    this.bindVariables('table', { tableName: table.tableName });
    table.grantReadWriteData(this);
    return this;
  }

  /**
   * TABLE_NAME, and exactly the access declared: read/write (bindTable), or these actions on the
   * table and its indexes, or, scoped to partition families, these actions on the table's items
   * whose partition key begins with one of them (dynamodb:LeadingKeys, every key of the request).
   */
  bindTableAccess(table: ITable, access: TableAccess): this {
    if (access === 'readWrite') return this.bindTable(table);
    this.bindVariables('table', { tableName: table.tableName });
    if (!access.partitions) {
      table.grant(this, ...access.actions);
      return this;
    }
    this.addToRolePolicy(
      new PolicyStatement({
        actions: [...access.actions],
        resources: [table.tableArn],
        conditions: {
          'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': access.partitions.map((p) => `${p}*`) },
        },
      }),
    );
    return this;
  }

  /**
   * BUCKET_NAME, and the right to sign S3 GET and PUT URLs for PDFs (the renderer uploads
   * through the PUT URL; callers download through the GET URL).
   */
  /** BUCKET_NAME only: the grant is the caller's (assets, PdfBucket.grantAssets). */
  bindBucketName(bucket: PdfBucket): this {
    return this.bindVariables('pdfBucket', { bucketName: bucket.bucketName });
  }

  bindPdfBucket(bucket: PdfBucket): this {
    this.bindVariables('pdfBucket', { bucketName: bucket.bucketName });
    bucket.grantPresignPdfObjects(this);
    return this;
  }

  /** RENDERER_FUNCTION_NAME, and the right to invoke that function and nothing else. */
  bindRenderer(renderer: IFunction): this {
    this.bindVariables('renderer', { functionName: renderer.functionName });
    renderer.grantInvoke(this);
    return this;
  }

  /** RENDER_QUEUE_URL, and the right to send to that queue (and to use its encryption key). */
  bindRenderQueue(queue: IQueue): this {
    this.bindVariables('renderQueue', { queueUrl: queue.queueUrl });
    queue.grantSendMessages(this);
    return this;
  }

  /**
   * RENDER_QUEUE_URL, and the rights of the queue's consumer: receive, delete, and hold a message
   * back (ChangeMessageVisibility, its retry backoff); and send, for a batch run's items it did
   * not take, queued again afresh (functions/domain/renders/render-run.ts).
   */
  bindRenderQueueConsumer(queue: IQueue): this {
    this.bindVariables('renderQueue', { queueUrl: queue.queueUrl });
    queue.grantConsumeMessages(this);
    queue.grantSendMessages(this);
    return this;
  }

  /** kms:GetPublicKey on the deployment's tagged signing keys (lib/signing-keys-grant.ts), and nothing else of KMS. */
  bindKmsSigningKeys(): this {
    grantTaggedSigningKeys(this, 'kms:GetPublicKey');
    return this;
  }

  /** sts:AssumeRole on customers' destination roles, with the service's external id only (lib/destination-roles-grant.ts). */
  bindDestinationRoles(): this {
    grantDestinationRoles(this);
    return this;
  }

  /** DELIVERY_QUEUE_URL, and the right to send to that queue (and nothing else on it). */
  bindDeliveryQueue(queue: IQueue): this {
    this.bindVariables('deliveryQueue', { queueUrl: queue.queueUrl });
    queue.grantSendMessages(this);
    return this;
  }

  /** BATCH_OUTPUT_QUEUE_URL, and the right to send to that queue (and nothing else on it). */
  bindBatchOutputQueue(queue: IQueue): this {
    this.bindVariables('batchOutputQueue', { queueUrl: queue.queueUrl });
    queue.grantSendMessages(this);
    return this;
  }

  /** USAGE_EVENT_BUS_NAME, and the right to put events to that bus (events:PutEvents, nothing else). */
  bindUsageEventBus(bus: IEventBus): this {
    this.bindVariables('usageEventBus', { eventBusName: bus.eventBusName });
    bus.grantPutEventsTo(this);
    return this;
  }

  /** API_KEY_SECRET_ID, and the right to read that one secret (the API-key HMAC key). */
  bindApiKeySecret(secret: ISecret): this {
    this.bindVariables('apiKeySecret', { secretId: secret.secretArn });
    secret.grantRead(this);
    return this;
  }

  /** WEBHOOK_QUEUE_URL, and the right to send to that queue (and nothing else on it). */
  bindWebhookQueue(queue: IQueue): this {
    this.bindVariables('webhookQueue', { queueUrl: queue.queueUrl });
    queue.grantSendMessages(this);
    return this;
  }

  /**
   * COGNITO_USER_POOL_ID and COGNITO_CLIENT_ID (the accepted app clients, comma-separated): session
   * tokens are verified against the pool's public keys.
   */
  bindUserPool(userPool: UserPoolIds): this {
    return this.bindVariables('userPool', {
      userPoolId: userPool.userPoolId,
      clientIds: [userPool.userPoolClientId, ...(userPool.additionalClientIds ?? [])].join(','),
    });
  }

  /** Plain settings: values without an IAM side. */
  addEnvironmentVariables(variables: Readonly<Record<string, string>>): this {
    for (const [name, value] of Object.entries(variables)) this.addEnvironment(name, value);
    return this;
  }
}
