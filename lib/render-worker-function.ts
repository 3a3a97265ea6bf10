/**
 * The render queue's consumer (functions/render-worker): a Lambda fed by an SQS event source
 * mapping (batch size 1, ReportBatchItemFailures, maximum concurrency a setting). For each async
 * job it reads the order, keeps the job's lifecycle (claims, retries, units, webhook events) and
 * has the async renderer (a RendererFunction sized for large documents) render it, invoked as the
 * pdf function invokes the sync one. Its role: the table (jobs, usage), the PDF bucket's presigned
 * upload and the orders it reads and deletes, consuming the render queue, invoking the async
 * renderer. A stranger's page never runs here: Chromium runs in the renderer, whose role is logs
 * only, so a page that broke out of Chromium would find no credential for anyone's data.
 */
import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { PdfBucket } from './pdf-bucket.js';
import { ServiceFunction } from './service-function.js';

export interface RenderWorkerFunctionProps {
  readonly table: ITable;
  readonly pdfBucket: PdfBucket;
  readonly queue: IQueue;
  /** The webhook queue: job events of async jobs that name an endpoint are sent to it. */
  readonly webhookQueue: IQueue;
  /** The async renderer it invokes (renderer-function.ts, purpose 'async'). */
  readonly renderer: IFunction;
  /** The async renderer's timeout plus the consumer's own work (service-settings.ts). */
  readonly timeoutSeconds: number;
  /** The event source mapping's maximum concurrency (2-1000). */
  readonly maxConcurrency: number;
  /** The deployment's settings as environment variables. */
  readonly environment: Readonly<Record<string, string>>;
  /**
   * @default 512 MiB: it reads an order (up to the request's 6 MB), makes a few table calls and
   * waits on the renderer's invoke; Chromium's memory is the async renderer's.
   */
  readonly memorySizeMiB?: number;
  /** @default RemovalPolicy.RETAIN */
  readonly logRemovalPolicy?: RemovalPolicy;
}

export class RenderWorkerFunction extends Construct {
  readonly function: ServiceFunction;

  constructor(scope: Construct, id: string, props: RenderWorkerFunctionProps) {
    super(scope, id);
    this.function = new ServiceFunction(this, 'Function', {
      resource: 'render-worker',
      description: 'Runs async PDF jobs from the render queue, rendered by the async renderer',
      memorySizeMiB: props.memorySizeMiB ?? 512,
      timeout: Duration.seconds(props.timeoutSeconds),
      logRemovalPolicy: props.logRemovalPolicy,
    });
    this.function.addEnvironmentVariables(props.environment);
    this.function.bindTable(props.table);
    this.function.bindPdfBucket(props.pdfBucket);
    props.pdfBucket.grantConsumeOrders(this.function);
    this.function.bindRenderQueueConsumer(props.queue);
    this.function.bindRenderer(props.renderer);
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
