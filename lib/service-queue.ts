/**
 * One queue of the queue table (functions/queues.ts) and its dead-letter queue: SQS with
 * server-side encryption (SQS-managed keys) and TLS required. A message that its consumer could
 * not process `maxReceiveCount` times moves to the DLQ, which keeps it for an operator; an alarm
 * watches the DLQ's depth, another the age of the queue's oldest message (every queue's: the
 * entry's threshold, or an hour), and one its depth where the entry declares it.
 * The visibility timeout is the entry's, from the settings and the timeout of the queue's consumer.
 */
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { QueueDeclaration } from '../functions/queues.js';
import type { Settings } from '../functions/settings.js';
import { withRunbook } from './runbook.js';

export interface ServiceQueueProps {
  readonly declaration: QueueDeclaration;
  /** The deployment's checked settings (the visibility and the redrive count derive from them). */
  readonly settings: Settings;
  /** The timeout of the queue's consumer, which its visibility timeout is sized from. */
  readonly consumerTimeoutSeconds: number;
  /** @default RemovalPolicy.DESTROY: messages are work in flight, not data */
  readonly removalPolicy?: RemovalPolicy;
}

/** The oldest-message alarm's threshold for a queue whose entry names none. */
export const DEFAULT_OLDEST_AGE_SECONDS = 3600;

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
  /** The oldest message waiting longer than the entry's threshold (an hour by default). */
  readonly oldestAgeAlarm: Alarm;

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
        alarmDescription: withRunbook(alarms.depth.description, 'queue-depth'),
        metric: this.queue.metricApproximateNumberOfMessagesVisible({ period, statistic: 'Maximum' }),
        threshold: alarms.depth.threshold,
        evaluationPeriods: 3,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
    }
    const oldestAge = alarms?.oldestAge ?? {
      thresholdSeconds: DEFAULT_OLDEST_AGE_SECONDS,
      description: `A message has waited in the ${d.name} queue over an hour: its consumer is failing, throttled or too few`,
    };
    this.oldestAgeAlarm = new Alarm(this, 'OldestAgeAlarm', {
      alarmDescription: withRunbook(oldestAge.description, 'queue-oldest-message'),
      metric: this.queue.metricApproximateAgeOfOldestMessage({ period, statistic: 'Maximum' }),
      threshold: oldestAge.thresholdSeconds,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    this.deadLetterAlarm = new Alarm(this, 'DeadLetterAlarm', {
      alarmDescription: withRunbook(
        alarms?.deadLetterDescription ?? `A ${d.name} queue message is in its dead-letter queue`,
        'queue-dead-letter',
      ),
      metric: this.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period, statistic: 'Maximum' }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
  }

  /** The queue's alarms: depth where declared, age, then the dead-letter queue's. */
  get alarms(): Alarm[] {
    return [this.depthAlarm, this.oldestAgeAlarm, this.deadLetterAlarm].filter(
      (a): a is Alarm => a !== undefined,
    );
  }
}
