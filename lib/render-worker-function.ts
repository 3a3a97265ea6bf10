/**
 * The render queue's consumer (functions/render-worker): a Lambda fed by an SQS event source
 * mapping (batch size 1, ReportBatchItemFailures, maximum concurrency a setting), which renders
 * async jobs in-process with Chromium from the renderer's layer. Sized for large documents: its
 * timeout is the async render budget plus a minute (at most Lambda's 900 s), its memory
 * 3,008 MiB by default (see below). Its role: the table (jobs, usage), the PDF bucket's presigned
 * upload and the orders it reads and deletes, and consuming the render queue.
 *
 * Unlike the sync renderer's role (logs only), this one holds data permissions while a stranger's
 * page runs in the same function: Chromium's own sandboxing and the renderer's egress policy
 * (functions/renderer/egress.ts) stand between them, as the lead's design chose (in-process for
 * renders up to 15 minutes).
 */
import { join } from 'node:path';
import { Duration, type RemovalPolicy, Size } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { RENDERER_VARIABLES } from '../functions/wiring.js';
import { ChromiumLayer } from './chromium-layer.js';
import type { PdfBucket } from './pdf-bucket.js';
import { handlerEntry, PROJECT_ROOT, ServiceFunction } from './service-function.js';

export interface RenderWorkerFunctionProps {
  readonly table: ITable;
  readonly pdfBucket: PdfBucket;
  readonly queue: IQueue;
  /** The webhook queue: job events of async jobs that name an endpoint are sent to it. */
  readonly webhookQueue: IQueue;
  /** The renderer's Chromium layer (one asset for both functions). */
  readonly layer: ChromiumLayer;
  /** The async budget plus the consumer's own work (service-settings.ts). */
  readonly timeoutSeconds: number;
  /** The event source mapping's maximum concurrency (2-1000). */
  readonly maxConcurrency: number;
  /** The deployment's settings as environment variables. */
  readonly environment: Readonly<Record<string, string>>;
  /**
   * @default 3008 MiB. The sync renderer's 2,048 MiB holds 5 MiB of HTML (1,152 table pages) at a
   * ~1.2 GiB peak (renderer-function.ts); an async 1,000-page report peaked at the figure in the
   * README (Async renders), and more memory buys CPU (two vCPUs from 3,538 MiB): a large print is
   * CPU-bound in Chromium's renderer process.
   */
  readonly memorySizeMiB?: number;
  readonly taggedPdf?: boolean;
  /** @default RemovalPolicy.RETAIN */
  readonly logRemovalPolicy?: RemovalPolicy;
}

export class RenderWorkerFunction extends Construct {
  readonly function: ServiceFunction;

  constructor(scope: Construct, id: string, props: RenderWorkerFunctionProps) {
    super(scope, id);
    this.function = new ServiceFunction(this, 'Function', {
      resource: 'render-worker',
      description: 'Renders async PDF jobs from the render queue (Chromium in-process)',
      memorySizeMiB: props.memorySizeMiB ?? 3008,
      timeout: Duration.seconds(props.timeoutSeconds),
      architecture: ChromiumLayer.ARCHITECTURE,
      layers: [props.layer],
      // Chromium's 200 MB in /tmp, and a PDF of up to 50 MiB beside it.
      ephemeralStorageSize: Size.mebibytes(1024),
      format: OutputFormat.CJS,
      externalModules: props.layer.externalsFor(handlerEntry('render-worker')),
      workerBundles: {
        'templating-worker.cjs': join(PROJECT_ROOT, 'functions', 'renderer', 'templating-worker.ts'),
      },
      logRemovalPolicy: props.logRemovalPolicy,
    });
    this.function.addEnvironmentVariables(props.environment);
    this.function.addEnvironment(RENDERER_VARIABLES.fontconfigFile, ChromiumLayer.FONTCONFIG_FILE);
    if (props.taggedPdf) this.function.addEnvironment(RENDERER_VARIABLES.taggedPdf, 'true');
    this.function.bindTable(props.table);
    this.function.bindPdfBucket(props.pdfBucket);
    props.pdfBucket.grantConsumeOrders(this.function);
    this.function.bindRenderQueueConsumer(props.queue);
    // An async job that names a webhook endpoint tells it when it ends.
    this.function.bindWebhookQueue(props.webhookQueue);
    this.function.addEventSource(
      new SqsEventSource(props.queue, {
        batchSize: 1,
        reportBatchItemFailures: true,
        maxConcurrency: props.maxConcurrency,
      }),
    );
  }
}
