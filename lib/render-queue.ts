/**
 * The render queue (async renders, functions/domain/async-renders.ts) and its dead-letter queue:
 * SQS with server-side encryption (SQS-managed keys) and TLS required. A message that no consumer
 * could process `maxReceiveCount` times (the attempts an async render gets) moves to the DLQ, which
 * keeps it 14 days for an operator (an alarm watches its depth, service-monitoring.ts).
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, type IAlarmAction, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { type DeadLetterQueue, Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

export interface RenderQueueProps {
  /** The consumer's timeout: the visibility timeout is six times it (AWS's guidance for Lambda consumers). */
  readonly consumerTimeout: Duration;
  /** Receives before a message moves to the DLQ: the async render's attempts (ASYNC_MAX_ATTEMPTS). */
  readonly maxReceiveCount: number;
  /** @default RemovalPolicy.DESTROY: messages are work in flight, not data */
  readonly removalPolicy?: RemovalPolicy;
  /** Where the alarms notify. @default none */
  readonly alarmActions?: readonly IAlarmAction[];
  /**
   * Messages waiting (visible) past which the depth alarm fires: renders queue faster than the
   * consumers take them.
   * @default 1000 (a batch of 1,000 is normal; more for 15 minutes is not)
   */
  readonly depthThreshold?: number;
  /**
   * Age of the oldest message past which the age alarm fires.
   * @default 30 minutes: an async render should start well within it
   */
  readonly oldestAgeThreshold?: Duration;
}

export class RenderQueue extends Construct {
  readonly queue: Queue;
  readonly deadLetterQueue: Queue;
  /** Messages waiting past the threshold for 15 minutes. */
  readonly depthAlarm: Alarm;
  /** The oldest message waiting longer than the threshold. */
  readonly oldestAgeAlarm: Alarm;
  /** Any message in the DLQ: a render nobody could process (its job ends by the sweeper). */
  readonly deadLetterAlarm: Alarm;

  constructor(scope: Construct, id: string, props: RenderQueueProps) {
    super(scope, id);
    const common = {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      removalPolicy: props.removalPolicy ?? RemovalPolicy.DESTROY,
    };
    this.deadLetterQueue = new Queue(this, 'DeadLetterQueue', {
      ...common,
      retentionPeriod: Duration.days(14),
    });
    const deadLetterQueue: DeadLetterQueue = {
      queue: this.deadLetterQueue,
      maxReceiveCount: props.maxReceiveCount,
    };
    this.queue = new Queue(this, 'Queue', {
      ...common,
      visibilityTimeout: Duration.seconds(props.consumerTimeout.toSeconds() * 6),
      // Longer than a job waits in it (ASYNC_QUEUE_LEASE_SECONDS, after which the sweeper sends again).
      retentionPeriod: Duration.days(4),
      deadLetterQueue,
    });

    const period = Duration.minutes(5);
    this.depthAlarm = new Alarm(this, 'DepthAlarm', {
      alarmDescription:
        'Async renders are queued faster than the consumers take them: raise asyncRenders.concurrency, or a batch is larger than expected',
      metric: this.queue.metricApproximateNumberOfMessagesVisible({ period, statistic: 'Maximum' }),
      threshold: props.depthThreshold ?? 1000,
      evaluationPeriods: 3,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    this.oldestAgeAlarm = new Alarm(this, 'OldestAgeAlarm', {
      alarmDescription:
        'An async render has waited in the render queue too long: the consumer is failing, throttled or too few',
      metric: this.queue.metricApproximateAgeOfOldestMessage({ period, statistic: 'Maximum' }),
      threshold: (props.oldestAgeThreshold ?? Duration.minutes(30)).toSeconds(),
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    this.deadLetterAlarm = new Alarm(this, 'DeadLetterAlarm', {
      alarmDescription:
        "A render queue message could not be processed (moved to the DLQ after its receives); its job is ended by the sweeper. Read the consumer's logs, then purge the DLQ",
      metric: this.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period, statistic: 'Maximum' }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    for (const action of props.alarmActions ?? []) {
      for (const alarm of [this.depthAlarm, this.oldestAgeAlarm, this.deadLetterAlarm])
        alarm.addAlarmAction(action);
    }
  }
}
