/**
 * The renderer: executes the Jinja2 template in a worker thread and Chromium (from its layer)
 * turns the HTML into a PDF that it PUTs to a presigned URL. It is handed everything it needs in
 * the invoke payload (template source, variables, options, the URL), so its role grants nothing
 * but writing its own logs, asking AWS KMS to sign with the signing keys the account tagged for
 * it (issue 34), and reading the fonts the layer leaves out (the CJK fonts, S3 assets: exactly
 * their objects, issue 42): no other S3, no DynamoDB, no X-Ray. That is why templates, code from strangers, run
 * here and not in the API functions.
 */
import { join } from 'node:path';
import { Duration, type RemovalPolicy, Size, Stack, Token, Validations } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Alias, type IFunction, Tracing } from 'aws-cdk-lib/aws-lambda';
import { OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { Asset } from 'aws-cdk-lib/aws-s3-assets';
import { Construct } from 'constructs';
import { FETCHED_FONTS_VARIABLES, RENDERER_VARIABLES, SIGNING_KEY_TAG } from '../functions/wiring.js';
import { ChromiumLayer } from './chromium-layer.js';
import { resolveLayerFonts } from './layer-fonts.js';
import { withRunbook } from './runbook.js';
import { handlerEntry, PROJECT_ROOT, SERVICE_RUNTIME, ServiceFunction } from './service-function.js';
import { grantTaggedSigningKeys } from './signing-keys-grant.js';

export interface RendererFunctionProps {
  /** The renderer's Lambda timeout: the render budget plus its own start and upload. */
  readonly timeoutSeconds: number;
  /**
   * @default 2048 MiB. Measured with this synthesized bundle and layer (x86_64, summed RSS of the
   * Node process and Chromium's processes, which over-counts shared pages): a warm browser holds
   * ~0.55 GiB; a 161-page table peaks at ~0.9 GiB; 5 MiB of HTML (the cloud's rendered-HTML limit,
   * 1,152 pages) at ~1.2 GiB. The templating worker adds ~10 MB warm and ~25 MB after templating
   * 5 MiB of HTML (measured locally with the bundled worker), its heap capped at 256 MiB
   * (templating-pool.ts). 2,048 MiB keeps that largest accepted input clear of the limit, and buys
   * a little more than one vCPU (Lambda gives one full vCPU at 1,769 MiB), which the multi-process
   * browser uses while the renderer process lays out and prints. More memory buys CPU for faster
   * large renders: raise it (up to 10,240) if big documents near the budget.
   */
  readonly memorySizeMiB?: number;
  /**
   * Print tagged (accessible) PDFs: the renderer's PDF_TAGGED.
   * @default false, as Chromium and Gotenberg print (tagging makes large tables far bigger and slower)
   */
  readonly taggedPdf?: boolean;
  /**
   * Concurrent renders at most: reserved for the renderer and capping it, or `false` for no
   * reservation (the renderer then shares the account's unreserved concurrency, without a cap).
   * @default 20 (DEFAULT_RENDERER_RESERVED_CONCURRENCY)
   */
  readonly reservedConcurrency?: number | false;
  /**
   * Execution environments kept initialized (Chromium inflated and launched, a page open), so that
   * that many concurrent renders never wait for a cold start. They are billed whether used or not:
   * at 2,048 MiB on x86_64, about $21.90 a month each (`npm run cost` prints the price from
   * lib/cost/prices.json; docs/deploy.md, Costs). Callers invoke the `live` alias then (`invokeTarget`),
   * the only version that has them. At most the reserved concurrency.
   * @default 0: none; a render after an idle spell may meet a cold start (docs/deploy.md, Cold start)
   */
  readonly provisionedConcurrency?: number;
  /** @default RemovalPolicy.RETAIN */
  readonly logRemovalPolicy?: RemovalPolicy;
  /**
   * The Chromium layer of another renderer, to share one asset.
   * @default a layer of its own
   */
  readonly layer?: ChromiumLayer;
  /** What it renders, for its description and alarms. @default 'sync' */
  readonly purpose?: 'sync' | 'async';
}

/**
 * The renderer's default concurrency: a cap on what a flood of renders can spend, and a floor
 * that the API functions cannot take from it. 20 renderers at 2,048 MiB busy without a pause cost
 * $0.04 a minute ($58 a day); the 1,000 of a default account would cost $2 a minute. Measured
 * renders take 0.1 to 0.6 s (README, Speed and cost), so 20 render 30 to 200 PDFs a second, about
 * what the API's default stage rate (50 requests a second, service-api.ts) lets through. Lambda
 * keeps part of an account's concurrency unreserved (100 of the default 1,000), so a new account
 * whose limit is lower (some start at 10) cannot reserve 20 and the deploy fails: deploy with
 * `false` there, or ask for a higher limit first.
 */
export const DEFAULT_RENDERER_RESERVED_CONCURRENCY = 20;

export class RendererFunction extends Construct {
  readonly function: ServiceFunction;
  readonly layer: ChromiumLayer;
  readonly errorsAlarm: Alarm;
  readonly throttlesAlarm: Alarm;
  /**
   * What callers invoke: the function, or with provisioned concurrency its `live` alias (the
   * published version that holds the provisioned environments; the unqualified function has none).
   */
  readonly invokeTarget: IFunction;

  constructor(scope: Construct, id: string, props: RendererFunctionProps) {
    super(scope, id);
    const reserved = props.reservedConcurrency ?? DEFAULT_RENDERER_RESERVED_CONCURRENCY;
    if (reserved !== false && !(Number.isInteger(reserved) && reserved >= 1)) {
      throw new Error(
        `rendererReservedConcurrency must be a whole number of at least 1, or false, got ${reserved}`,
      );
    }
    const provisioned = props.provisionedConcurrency ?? 0;
    if (!(Number.isInteger(provisioned) && provisioned >= 0)) {
      throw new Error(
        `rendererProvisionedConcurrency must be a whole number of at least 0, got ${provisioned}`,
      );
    }
    if (reserved !== false && provisioned > reserved) {
      throw new Error(
        `rendererProvisionedConcurrency (${provisioned}) cannot exceed the renderer's reserved concurrency (${reserved})`,
      );
    }
    this.layer =
      props.layer ??
      new ChromiumLayer(this, 'ChromiumLayer', {
        projectRoot: PROJECT_ROOT,
        runtime: SERVICE_RUNTIME,
      });
    const async = props.purpose === 'async';
    this.function = new ServiceFunction(this, 'Function', {
      resource: 'renderer',
      description: async
        ? "Renders async jobs' HTML to PDF with Chromium for the render queue consumer, and uploads it to a presigned URL"
        : 'Renders HTML to PDF with Chromium and uploads it to a presigned URL',
      memorySizeMiB: props.memorySizeMiB ?? 2048,
      timeout: Duration.seconds(props.timeoutSeconds),
      // @sparticuz/chromium's npm package carries the x86_64 build only.
      architecture: ChromiumLayer.ARCHITECTURE,
      layers: [this.layer],
      // Chromium keeps a profile in /tmp and the CJK fonts are fetched there (59 MB, all four);
      // the default 512 MiB leaves little room for a large PDF beside them.
      ephemeralStorageSize: Size.mebibytes(1024),
      // An invoke over the cap is refused at once (TooManyRequestsException); the pdf function
      // answers it as a failed render and gives the quota unit back (functions/adapters/lambda/renderer-client.ts).
      reservedConcurrentExecutions: reserved === false ? undefined : reserved,
      // CommonJS, because Lambda serves layer packages through NODE_PATH (/opt/nodejs/node_modules),
      // which `require` honours. The layer's packages stay out of the bundle (see externalsFor);
      // puppeteer-core is bundled, tree-shaken, with the handler: a few MB of JavaScript instead of
      // its ~40 MB install in the layer.
      format: OutputFormat.CJS,
      externalModules: this.layer.externalsFor(handlerEntry('renderer')),
      // The templating worker (functions/renderer/templating-pool.ts) is its own small bundle beside
      // index.js: a worker thread that loads the engine and nothing else, not the whole handler.
      workerBundles: {
        'templating-worker.cjs': join(PROJECT_ROOT, 'functions', 'renderer', 'templating-worker.ts'),
      },
      // X-Ray would add xray:* to the role; the renderer's role is logs only, and the pdf
      // function's trace already times the invoke.
      tracing: Tracing.DISABLED,
      logRemovalPolicy: props.logRemovalPolicy,
    });
    // Chromium finds the layer's fonts through it (fontconfig reads it; the renderer passes it on).
    this.function.addEnvironment(RENDERER_VARIABLES.fontconfigFile, ChromiumLayer.FONTCONFIG_FILE);
    // Chromium unpacked in the layer, launched from /opt as it is: no inflation at a cold start
    // (functions/renderer/chromium-pack.ts).
    this.function.addEnvironment(RENDERER_VARIABLES.chromiumPackDir, ChromiumLayer.CHROMIUM_PACK_DIR);
    // The fonts the layer leaves out (the CJK fonts): each file an S3 asset, fetched into /tmp on a
    // page's first need (functions/renderer/fetched-fonts.ts); the role reads exactly those objects.
    const families: Record<string, { key: string; file: string }[]> = {};
    let bucket: string | undefined;
    const objects: string[] = [];
    for (const [i, font] of resolveLayerFonts(PROJECT_ROOT).fetchedFiles.entries()) {
      const asset = new Asset(this, `FetchedFont${i}`, { path: font.source });
      // s3:GetObject on the object alone (Asset.grantRead would add listing and the bucket's settings).
      objects.push(asset.bucket.arnForObjects(asset.s3ObjectKey));
      bucket ??= asset.s3BucketName;
      const list = families[font.font.family] ?? [];
      families[font.font.family] = list;
      list.push({ key: asset.s3ObjectKey, file: font.name });
    }
    if (bucket !== undefined) {
      this.function.addToRolePolicy(new PolicyStatement({ actions: ['s3:GetObject'], resources: objects }));
      this.function.addEnvironment(FETCHED_FONTS_VARIABLES.bucket, bucket);
      this.function.addEnvironment(RENDERER_VARIABLES.fetchedFonts, JSON.stringify(families));
    }
    if (props.taggedPdf) this.function.addEnvironment(RENDERER_VARIABLES.taggedPdf, 'true');
    this.invokeTarget =
      provisioned === 0
        ? this.function
        : new Alias(this, 'Live', {
            aliasName: 'live',
            version: this.function.currentVersion,
            provisionedConcurrentExecutions: provisioned,
          });
    // A signature with a KMS-held key (issue 34): the renderer asks kms:Sign for the CMS signed
    // attributes, of the deployment's tagged signing keys only.
    grantTaggedSigningKeys(this.function, 'kms:Sign');

    const period = Duration.minutes(5);
    this.errorsAlarm = new Alarm(this, 'ErrorsAlarm', {
      alarmDescription: withRunbook(
        `The ${async ? 'async ' : ''}renderer crashed, ran out of memory or timed out (a render that fails cleanly is not an error)`,
        'renderer-errors',
      ),
      metric: this.function.metricErrors({ period }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    this.throttlesAlarm = new Alarm(this, 'ThrottlesAlarm', {
      alarmDescription: withRunbook(
        async
          ? 'Async renders were refused for concurrency (retried later by the render queue consumer): raise the ' +
              'account limit, or lower asyncRenders.concurrency'
          : "Render requests were refused for concurrency (answered as failed renders): raise the renderer's " +
              'reserved concurrency (rendererReservedConcurrency) or the account limit, or the plans are too generous',
        'renderer-throttles',
      ),
      metric: this.function.metricThrottles({ period }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
  }
}
