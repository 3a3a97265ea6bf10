/**
 * The render queue (async renders, functions/domain/async-renders.ts) and its dead-letter queue:
 * SQS with server-side encryption (SQS-managed keys) and TLS required. A message that no consumer
 * could process `maxReceiveCount` times (the attempts an async render gets) moves to the DLQ, which
 * keeps it 14 days for an operator (an alarm watches its depth, service-monitoring.ts).
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { type DeadLetterQueue, Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

export interface RenderQueueProps {
  /** The consumer's timeout: the visibility timeout is six times it (AWS's guidance for Lambda consumers). */
  readonly consumerTimeout: Duration;
  /** Receives before a message moves to the DLQ: the async render's attempts (ASYNC_MAX_ATTEMPTS). */
  readonly maxReceiveCount: number;
  /** @default RemovalPolicy.DESTROY: messages are work in flight, not data */
  readonly removalPolicy?: RemovalPolicy;
}

export class RenderQueue extends Construct {
  readonly queue: Queue;
  readonly deadLetterQueue: Queue;

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
  }
}
