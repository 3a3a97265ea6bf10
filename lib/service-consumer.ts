/**
 * One consumer of the consumer table (functions/consumers.ts): its function, made from its entry
 * with the bindings and grants the entry declares and nothing else (least privilege: the table's
 * actions it names, the queues it sends to or consumes), fed by its queue's event source mapping
 * (ReportBatchItemFailures, the entry's batch size and maximum concurrency) or run by an
 * EventBridge schedule; and watched: a failure destination (its queue's DLQ, or a failure queue
 * for a scheduled run that failed or was never delivered), an errors alarm and a heartbeat alarm.
 * A consumer added to the table gets all of this without a line here.
 *
 * Consumers run outside any VPC, as every function of the service: a webhook's POST goes to the
 * internet, its egress checked in code at connect time (functions/adapters/http/webhook-client.ts).
 */
import { join } from 'node:path';
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import {
  Alarm,
  ComparisonOperator,
  MathExpression,
  Metric,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { type IEventBus, Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { type IQueue, Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { ConsumerDeclaration } from '../functions/consumers.js';
import type { QueueDeclaration } from '../functions/queues.js';
import type { Settings } from '../functions/settings.js';
import { SERVICE_METRICS } from '../functions/wiring.js';
import type { PdfBucket } from './pdf-bucket.js';
import { withRunbook } from './runbook.js';
import { PROJECT_ROOT, ServiceFunction } from './service-function.js';
import type { ServiceQueue } from './service-queue.js';

/** EventBridge's retries of delivering a scheduled run to Lambda (its own default is 185, over a day). */
const SCHEDULE_DELIVERY_RETRIES = 2;
/** The heartbeat alarm's fewest periods without a completed run. */
export const HEARTBEAT_MISSING_PERIODS = 3;

/** What a consumer may be bound to: each entry takes what its `needs` name. */
export interface ConsumerParts {
  readonly table: ITable;
  readonly pdfBucket: PdfBucket;
  readonly apiKeySecret: ISecret;
  /** The renderer of async renders (renderer-function.ts, purpose 'async'). */
  readonly asyncRenderer: IFunction;
  /** Every queue of the queue table, by its name there. */
  readonly queues: ReadonlyMap<string, ServiceQueue>;
  /** The bus usage events are put to (issue 39). */
  readonly usageEventBus?: IEventBus;
}

export interface ServiceConsumerProps {
  readonly declaration: ConsumerDeclaration;
  /** The deployment's checked settings (timeouts and concurrency derive from them). */
  readonly settings: Settings;
  readonly parts: ConsumerParts;
  /** The deployment's settings as environment variables. */
  readonly environment: Readonly<Record<string, string>>;
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
  /** Where a message or a run it failed on goes: its queue's DLQ, or its failure queue. */
  readonly failureDestination: IQueue;
  /** Its errors, and its own faults when its entry names their metric. */
  readonly errorsAlarm: Alarm;
  /** No run completed for long enough (lib/service-consumer.ts, createHeartbeatAlarm). */
  readonly heartbeatAlarm: Alarm;

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
    if (needs.table) {
      fn.bindTableAccess(parts.table, needs.table === 'readWrite' ? 'readWrite' : { actions: needs.table });
    }
    if (needs.apiKeySecret) fn.bindApiKeySecret(parts.apiKeySecret);
    if (needs.pdfBucket) {
      fn.bindPdfBucket(parts.pdfBucket);
      if (needs.pdfBucket.consumeOrders) parts.pdfBucket.grantConsumeOrders(fn);
      if (needs.pdfBucket.readAssets) parts.pdfBucket.grantAssets(fn, 'read');
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
    if (needs.deliveryQueue === 'send') fn.bindDeliveryQueue(boundAs('deliveryQueue'));
    if (needs.destinationRoles) fn.bindDestinationRoles();
    if (needs.usageEventBus === 'put') {
      if (!parts.usageEventBus) throw new Error(`${d.name}: the stack has no usage event bus`);
      fn.bindUsageEventBus(parts.usageEventBus);
    }

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
      // A message its consumer failed on maxReceiveCount times moves to the queue's DLQ (an SQS
      // event source mapping has no on-failure destination of its own: the redrive is it).
      this.failureDestination = this.source.deadLetterQueue;
    } else {
      // A run that failed after its retries, or that EventBridge could not deliver, is kept here
      // for an operator (the on-failure record holds the error); the next run comes anyway.
      const failures = new Queue(this, 'FailureQueue', {
        encryption: QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        retentionPeriod: Duration.days(14),
        removalPolicy: RemovalPolicy.DESTROY,
      });
      Validations.of(failures).acknowledge({
        id: 'AwsSolutions-SQS3',
        reason: `This is where the ${d.name}'s failed runs go: it is a dead-letter queue itself.`,
      });
      this.failureDestination = failures;
      // A run older than one period is superseded by the next one.
      const maxEventAge = Duration.seconds(Math.max(60, source.rateMinutes * 60));
      fn.configureAsyncInvoke({
        retryAttempts: source.retryAttempts,
        maxEventAge,
        onFailure: new SqsDestination(failures),
      });
      this.schedule = new Rule(this, 'Schedule', {
        description: `Runs the ${d.name}`,
        schedule: Schedule.rate(Duration.minutes(source.rateMinutes)),
        targets: [
          new LambdaFunction(fn, {
            // EventBridge's retries of delivering the run to Lambda (throttled, unavailable).
            retryAttempts: SCHEDULE_DELIVERY_RETRIES,
            maxEventAge,
            deadLetterQueue: failures,
          }),
        ],
      });
    }

    const period = Duration.minutes(5);
    // A crash fails the invocation (Errors); a fault on a record is reported as a partial batch
    // failure, which Lambda does not count as an error: a consumer that can counts those itself.
    const declared = d.errorsAlarm ?? {
      description: `${sentenceName(d.name)} runs failed (threw, crashed or timed out): ${d.description}`,
    };
    const faultsMetric = declared.faultsMetric;
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
      alarmDescription: withRunbook(declared.description, 'consumer-errors'),
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
    this.heartbeatAlarm = this.createHeartbeatAlarm(d, settings);
  }

  /**
   * No completed run (the heartbeat functions/core/consumer.ts counts) for long enough to be sure:
   * at least HEARTBEAT_MISSING_PERIODS periods, and more than the function's timeout plus its
   * schedule's interval, so that one long run in progress is not taken for a stopped consumer.
   */
  private createHeartbeatAlarm(d: ConsumerDeclaration, settings: Settings): Alarm {
    const source = d.source;
    const periodMinutes = source.kind === 'schedule' ? Math.max(5, source.rateMinutes) : 5;
    const period = Duration.minutes(periodMinutes);
    const windowSeconds =
      d.timeoutSeconds(settings) + (source.kind === 'schedule' ? source.rateMinutes * 60 : 0);
    const evaluationPeriods = Math.max(
      HEARTBEAT_MISSING_PERIODS,
      Math.ceil(windowSeconds / period.toSeconds()) + 1,
    );
    const beats = new Metric({
      namespace: SERVICE_METRICS.namespace,
      metricName: SERVICE_METRICS.consumerHeartbeat,
      dimensionsMap: { service: SERVICE_METRICS.service, [SERVICE_METRICS.consumerDimension]: d.name },
      statistic: 'Sum',
      period,
    });
    const common = {
      evaluationPeriods,
      datapointsToAlarm: evaluationPeriods,
    };
    const minutes = evaluationPeriods * periodMinutes;
    if (source.kind === 'schedule') {
      // A scheduled consumer runs every period: no data at all is the alarm.
      return new Alarm(this, 'HeartbeatAlarm', {
        ...common,
        alarmDescription: withRunbook(
          `The ${d.name} has completed no run in ${minutes} minutes (it runs every ${source.rateMinutes} ` +
            'minute(s)): it fails every run, or is not invoked at all',
          'consumer-heartbeat',
        ),
        metric: beats,
        threshold: 1,
        comparisonOperator: ComparisonOperator.LESS_THAN_THRESHOLD,
        treatMissingData: TreatMissingData.BREACHING,
      });
    }
    const queue = this.source;
    if (!queue) throw new Error(`${d.name}: a queue consumer without its queue`);
    // A queue consumer runs only when there are messages, and SQS publishes nothing for a queue
    // idle for hours: no data is an idle queue, not a stopped consumer. Its heartbeat is missing
    // when messages waited (visible) through a whole period and no run completed in it.
    return new Alarm(this, 'HeartbeatAlarm', {
      ...common,
      alarmDescription: withRunbook(
        `Messages have waited in the ${source.queue.name} queue for ${minutes} minutes while the ${d.name} ` +
          'completed no run: it fails every batch, is throttled, or its event source mapping is off',
        'consumer-heartbeat',
      ),
      metric: new MathExpression({
        expression: 'IF(FILL(waiting, 0) > 0 AND FILL(beats, 0) == 0, 1, 0)',
        usingMetrics: {
          waiting: queue.queue.metricApproximateNumberOfMessagesVisible({ period, statistic: 'Minimum' }),
          beats,
        },
        period,
        label: `${sentenceName(d.name)}: messages waiting, no run`,
      }),
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
  }
}
