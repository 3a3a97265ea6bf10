/**
 * Webhook delivery in the cloud: the webhook queue (SQS, encrypted, TLS only) with a dead-letter
 * queue, and the sender Lambda (functions/webhook-sender) fed by an event source mapping that
 * reports partial batch failures. Retries with backoff are the sender's own (it queues each next
 * attempt with a delay), so the queue's redrive catches only messages the sender failed on itself
 * (the table or the queue down) five times. Alarms: sender errors, and any message in the DLQ.
 *
 * The sender runs outside any VPC: every POST goes to the internet, and its egress is checked in
 * code at connect time (functions/adapters/http/webhook-client.ts), as the renderer's is.
 */
import { Duration, type RemovalPolicy, Validations } from 'aws-cdk-lib';
import {
  Alarm,
  ComparisonOperator,
  type IAlarmAction,
  MathExpression,
  Metric,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { bindingEnvironment, SERVICE_METRICS } from '../functions/wiring.js';
import { ServiceFunction } from './service-function.js';

/** The sender's timeout: one attempt is at most WEBHOOK_TIMEOUT_MS (≤ 30 s) plus a few table calls. */
const SENDER_TIMEOUT_SECONDS = 60;

export interface WebhookDeliveryProps {
  readonly table: ITable;
  readonly apiKeySecret: ISecret;
  /** The deployment's settings as environment variables (the webhook timeout and schedule among them). */
  readonly environment: Readonly<Record<string, string>>;
  /** Where the alarms notify. @default none */
  readonly alarmActions?: readonly IAlarmAction[];
  /** @default RemovalPolicy.RETAIN */
  readonly logRemovalPolicy?: RemovalPolicy;
}

export class WebhookDelivery extends Construct {
  readonly queue: Queue;
  readonly deadLetterQueue: Queue;
  readonly sender: ServiceFunction;
  readonly senderErrorsAlarm: Alarm;
  readonly deadLetterAlarm: Alarm;

  constructor(scope: Construct, id: string, props: WebhookDeliveryProps) {
    super(scope, id);
    this.deadLetterQueue = new Queue(this, 'DeadLetterQueue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    Validations.of(this.deadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason: 'This is the webhook queue’s dead-letter queue: it has none of its own.',
    });
    this.queue = new Queue(this, 'Queue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // AWS: at least 6× the consumer's timeout, so a slow batch is not received twice meanwhile.
      visibilityTimeout: Duration.seconds(6 * SENDER_TIMEOUT_SECONDS),
      retentionPeriod: Duration.days(4),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: 5 },
    });
    this.sender = new ServiceFunction(this, 'Sender', {
      resource: 'webhook-sender',
      description: 'Sends signed webhooks to public addresses, one attempt per message',
      memorySizeMiB: 256,
      timeout: Duration.seconds(SENDER_TIMEOUT_SECONDS),
      logRemovalPolicy: props.logRemovalPolicy,
    });
    this.sender.addEnvironmentVariables({
      ...props.environment,
      ...bindingEnvironment('table', { tableName: props.table.tableName }),
    });
    // Least privilege: it reads endpoints and deliveries and appends attempts; it never deletes.
    props.table.grant(this.sender, 'dynamodb:GetItem', 'dynamodb:UpdateItem');
    this.sender.bindApiKeySecret(props.apiKeySecret);
    this.sender.bindWebhookQueue(this.queue);
    this.sender.addEventSource(
      new SqsEventSource(this.queue, { batchSize: 10, reportBatchItemFailures: true, maxConcurrency: 10 }),
    );

    const period = Duration.minutes(5);
    // A crash fails the invocation (Errors); a fault on a record is reported as a partial batch
    // failure, which Lambda does not count as an error: the sender counts those itself.
    const faults = new Metric({
      namespace: SERVICE_METRICS.namespace,
      metricName: SERVICE_METRICS.webhookSenderFaults,
      dimensionsMap: { service: SERVICE_METRICS.service },
      statistic: 'Sum',
      period,
    });
    this.senderErrorsAlarm = new Alarm(this, 'SenderErrorsAlarm', {
      alarmDescription:
        'The webhook sender failed on its own side (the table, the queue or a crash): deliveries wait for the redrive',
      metric: new MathExpression({
        expression: 'FILL(errors, 0) + FILL(faults, 0)',
        usingMetrics: { errors: this.sender.metricErrors({ period }), faults },
        period,
        label: 'Webhook sender errors and faults',
      }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    this.deadLetterAlarm = new Alarm(this, 'DeadLetterAlarm', {
      alarmDescription:
        'Webhook messages the sender could not process five times are in the dead-letter queue',
      metric: this.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5) }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    for (const alarm of [this.senderErrorsAlarm, this.deadLetterAlarm]) {
      alarm.addAlarmAction(...(props.alarmActions ?? []));
    }
  }
}
