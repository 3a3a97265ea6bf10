/**
 * One queue of the queue table (functions/queues.ts) and its dead-letter queue: SQS with
 * server-side encryption (SQS-managed keys) and TLS required. A message that its consumer could
 * not process `maxReceiveCount` times moves to the DLQ, which keeps it for an operator; an alarm
 * watches the DLQ's depth, and the queue's own depth and age where its entry declares them.
 * The visibility timeout is the entry's, from the settings and the timeout of the queue's consumer.
 */
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, type IAlarmAction, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { QueueDeclaration } from '../functions/queues.js';
import type { Settings } from '../functions/settings.js';

export interface ServiceQueueProps {
  readonly declaration: QueueDeclaration;
  /** The deployment's checked settings (the visibility and the redrive count derive from them). */
  readonly settings: Settings;
  /** The timeout of the queue's consumer, which its visibility timeout is sized from. */
  readonly consumerTimeoutSeconds: number;
  /** @default RemovalPolicy.DESTROY: messages are work in flight, not data */
  readonly removalPolicy?: RemovalPolicy;
  /** Where the alarms notify. @default none */
  readonly alarmActions?: readonly IAlarmAction[];
}

/**
 * The construct id of a queue: `<Name>Queue`, except where a deployed stack already has the
 * queue under another id (a new id would replace the queue, and drop the messages in it).
 */
const DEPLOYED_IDS: Readonly<Record<string, string>> = { webhooks: 'Webhooks' };
export const queueConstructId = (declaration: Pick<QueueDeclaration, 'name'>): string =>
  DEPLOYED_IDS[declaration.name] ??
  `${declaration.name.replace(/(^|-)(\w)/g, (_, _dash: string, c: string) => c.toUpperCase())}Queue`;

export class ServiceQueue extends Construct {
  readonly declaration: QueueDeclaration;
  readonly queue: Queue;
  readonly deadLetterQueue: Queue;
  /** Any message in the DLQ: one its consumer could not process. */
  readonly deadLetterAlarm: Alarm;
  /** Messages waiting past the entry's threshold for 15 minutes, when it declares one. */
  readonly depthAlarm?: Alarm;
  /** The oldest message waiting longer than the entry's threshold, when it declares one. */
  readonly oldestAgeAlarm?: Alarm;

  constructor(scope: Construct, id: string, props: ServiceQueueProps) {
    super(scope, id);
    const { declaration: d, settings } = props;
    this.declaration = d;
    const common = {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      removalPolicy: props.removalPolicy ?? RemovalPolicy.DESTROY,
      ...(d.fifo ? { fifo: true } : {}),
    };
    this.deadLetterQueue = new Queue(this, 'DeadLetterQueue', {
      ...common,
      retentionPeriod: Duration.seconds(d.deadLetterRetentionSeconds),
    });
    Validations.of(this.deadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason: `This is the ${d.name} queue’s dead-letter queue: it has none of its own.`,
    });
    this.queue = new Queue(this, 'Queue', {
      ...common,
      visibilityTimeout: Duration.seconds(d.visibilityTimeoutSeconds(settings, props.consumerTimeoutSeconds)),
      retentionPeriod: Duration.seconds(d.retentionSeconds),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: d.maxReceiveCount(settings) },
    });

    const period = Duration.minutes(5);
    const alarms = d.alarms;
    if (alarms?.depth) {
      this.depthAlarm = new Alarm(this, 'DepthAlarm', {
        alarmDescription: alarms.depth.description,
        metric: this.queue.metricApproximateNumberOfMessagesVisible({ period, statistic: 'Maximum' }),
        threshold: alarms.depth.threshold,
        evaluationPeriods: 3,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
    }
    if (alarms?.oldestAge) {
      this.oldestAgeAlarm = new Alarm(this, 'OldestAgeAlarm', {
        alarmDescription: alarms.oldestAge.description,
        metric: this.queue.metricApproximateAgeOfOldestMessage({ period, statistic: 'Maximum' }),
        threshold: alarms.oldestAge.thresholdSeconds,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
    }
    this.deadLetterAlarm = new Alarm(this, 'DeadLetterAlarm', {
      alarmDescription:
        alarms?.deadLetterDescription ?? `A ${d.name} queue message is in its dead-letter queue`,
      metric: this.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period, statistic: 'Maximum' }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    for (const action of props.alarmActions ?? []) {
      for (const alarm of this.alarms) alarm.addAlarmAction(action);
    }
  }

  /** The queue's alarms: depth and age where declared, then the dead-letter queue's. */
  get alarms(): Alarm[] {
    return [this.depthAlarm, this.oldestAgeAlarm, this.deadLetterAlarm].filter(
      (a): a is Alarm => a !== undefined,
    );
  }
}
