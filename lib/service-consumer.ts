/**
 * One consumer of the consumer table (functions/consumers.ts): its function, made from its entry
 * with the bindings and grants the entry declares and nothing else (least privilege: the table's
 * actions it names, the queues it sends to or consumes), fed by its queue's event source mapping
 * (ReportBatchItemFailures, the entry's batch size and maximum concurrency) or run by an
 * EventBridge schedule. A consumer added to the table gets all of this without a line here.
 *
 * Consumers run outside any VPC, as every function of the service: a webhook's POST goes to the
 * internet, its egress checked in code at connect time (functions/adapters/http/webhook-client.ts).
 */
import { join } from 'node:path';
import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import {
  Alarm,
  ComparisonOperator,
  type IAlarmAction,
  MathExpression,
  Metric,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { ConsumerDeclaration } from '../functions/consumers.js';
import type { QueueDeclaration } from '../functions/queues.js';
import type { Settings } from '../functions/settings.js';
import { bindingEnvironment, SERVICE_METRICS } from '../functions/wiring.js';
import type { PdfBucket } from './pdf-bucket.js';
import { PROJECT_ROOT, ServiceFunction } from './service-function.js';
import type { ServiceQueue } from './service-queue.js';

/** What a consumer may be bound to: each entry takes what its `needs` name. */
export interface ConsumerParts {
  readonly table: ITable;
  readonly pdfBucket: PdfBucket;
  readonly apiKeySecret: ISecret;
  /** The renderer of async renders (renderer-function.ts, purpose 'async'). */
  readonly asyncRenderer: IFunction;
  /** Every queue of the queue table, by its name there. */
  readonly queues: ReadonlyMap<string, ServiceQueue>;
}

export interface ServiceConsumerProps {
  readonly declaration: ConsumerDeclaration;
  /** The deployment's checked settings (timeouts and concurrency derive from them). */
  readonly settings: Settings;
  readonly parts: ConsumerParts;
  /** The deployment's settings as environment variables. */
  readonly environment: Readonly<Record<string, string>>;
  /** Where the errors alarm notifies, when the entry declares one. @default none */
  readonly alarmActions?: readonly IAlarmAction[];
  /** @default RemovalPolicy.RETAIN */
  readonly logRemovalPolicy?: RemovalPolicy;
}

/** The construct id of a consumer: its name in PascalCase (`render-worker` → `RenderWorker`). */
export const consumerConstructId = (declaration: Pick<ConsumerDeclaration, 'name'>): string =>
  declaration.name.replace(/(^|-)(\w)/g, (_, _dash: string, c: string) => c.toUpperCase());

/** The module a consumer's function runs: its folder's index.ts (exporting `handler`). */
export const consumerEntry = (declaration: ConsumerDeclaration): string =>
  join(declaration.directory ?? join(PROJECT_ROOT, 'functions', declaration.name), 'index.ts');

/** `webhook-sender` → `Webhook sender`, as a label reads. */
const sentenceName = (name: string): string => {
  const words = name.replaceAll('-', ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
};

export class ServiceConsumer extends Construct {
  readonly declaration: ConsumerDeclaration;
  readonly function: ServiceFunction;
  /** The queue it consumes, for a queue's consumer. */
  readonly source?: ServiceQueue;
  /** Its schedule, for a scheduled consumer. */
  readonly schedule?: Rule;
  /** Errors and its own faults, when its entry declares the alarm. */
  readonly errorsAlarm?: Alarm;

  constructor(scope: Construct, id: string, props: ServiceConsumerProps) {
    super(scope, id);
    const { declaration: d, settings, parts } = props;
    this.declaration = d;
    const fn = new ServiceFunction(this, 'Function', {
      resource: d.name,
      entry: consumerEntry(d),
      description: d.description,
      memorySizeMiB: d.memorySizeMiB,
      timeout: Duration.seconds(d.timeoutSeconds(settings)),
      logRemovalPolicy: props.logRemovalPolicy,
    });
    this.function = fn;
    fn.addEnvironmentVariables(props.environment);

    // Each need's variables with its grant, in one order for every consumer.
    const queueOf = (q: QueueDeclaration): ServiceQueue => {
      const made = parts.queues.get(q.name);
      if (!made) throw new Error(`${d.name}: no queue "${q.name}" in the stack (functions/queues.ts)`);
      return made;
    };
    const { needs } = d;
    if (needs.table === 'readWrite') fn.bindTable(parts.table);
    else if (needs.table) {
      fn.addEnvironmentVariables(bindingEnvironment('table', { tableName: parts.table.tableName }));
      parts.table.grant(fn, ...needs.table);
    }
    if (needs.apiKeySecret) fn.bindApiKeySecret(parts.apiKeySecret);
    if (needs.pdfBucket) {
      fn.bindPdfBucket(parts.pdfBucket);
      if (needs.pdfBucket.consumeOrders) parts.pdfBucket.grantConsumeOrders(fn);
    }
    /** The queue whose URL the binding carries (functions/queues.ts). */
    const boundAs = (binding: QueueDeclaration['binding']): IQueue => {
      const made = [...parts.queues.values()].find((q) => q.declaration.binding === binding);
      if (!made)
        throw new Error(`${d.name}: no queue of the stack is bound as ${binding} (functions/queues.ts)`);
      return made.queue;
    };
    if (needs.renderQueue === 'consume') fn.bindRenderQueueConsumer(boundAs('renderQueue'));
    else if (needs.renderQueue === 'send') fn.bindRenderQueue(boundAs('renderQueue'));
    if (needs.asyncRenderer) fn.bindRenderer(parts.asyncRenderer);
    if (needs.webhookQueue === 'send') fn.bindWebhookQueue(boundAs('webhookQueue'));
    if (needs.batchOutputQueue === 'send') fn.bindBatchOutputQueue(boundAs('batchOutputQueue'));

    const source = d.source;
    if (source.kind === 'queue') {
      this.source = queueOf(source.queue);
      fn.addEventSource(
        new SqsEventSource(this.source.queue, {
          batchSize: source.batchSize,
          reportBatchItemFailures: true,
          maxConcurrency: source.maxConcurrency(settings),
        }),
      );
    } else {
      this.schedule = new Rule(this, 'Schedule', {
        description: `Runs the ${d.name}`,
        schedule: Schedule.rate(Duration.minutes(source.rateMinutes)),
        targets: [new LambdaFunction(fn, { retryAttempts: source.retryAttempts })],
      });
    }

    if (d.errorsAlarm) {
      const period = Duration.minutes(5);
      // A crash fails the invocation (Errors); a fault on a record is reported as a partial batch
      // failure, which Lambda does not count as an error: the consumer counts those itself.
      const faultsMetric = d.errorsAlarm.faultsMetric;
      const usingMetrics = {
        errors: fn.metricErrors({ period }),
        ...(faultsMetric
          ? {
              faults: new Metric({
                namespace: SERVICE_METRICS.namespace,
                metricName: faultsMetric,
                dimensionsMap: { service: SERVICE_METRICS.service },
                statistic: 'Sum',
                period,
              }),
            }
          : {}),
      };
      this.errorsAlarm = new Alarm(this, 'ErrorsAlarm', {
        alarmDescription: d.errorsAlarm.description,
        metric: new MathExpression({
          expression: faultsMetric ? 'FILL(errors, 0) + FILL(faults, 0)' : 'FILL(errors, 0)',
          usingMetrics,
          period,
          label: `${sentenceName(d.name)} errors${faultsMetric ? ' and faults' : ''}`,
        }),
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
      for (const action of props.alarmActions ?? []) this.errorsAlarm.addAlarmAction(action);
    }
  }
}
