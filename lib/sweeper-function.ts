/**
 * The sweeper (functions/sweeper): a Lambda that EventBridge runs every minute, so that every job
 * ends and every unit is accounted for whatever happened to the request that held it. Its role may
 * read and update items (Query on the table and its indexes, GetItem, UpdateItem) and put one (a
 * webhook delivery it records); it never deletes one. It may send to the render queue (re-queueing
 * async jobs whose consumer died) and to the webhook queue (job.failed of a job it fails,
 * batch.completed of a batch it ends, and pending deliveries whose message never came).
 */
import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { bindingEnvironment } from '../functions/wiring.js';
import { ServiceFunction } from './service-function.js';

export interface SweeperFunctionProps {
  readonly table: ITable;
  /** Async jobs whose lease ran out with attempts left are sent to it again. */
  readonly renderQueue: IQueue;
  /** The jobs and batches it ends tell their webhook endpoints through it. */
  readonly webhookQueue: IQueue;
  /** The deployment's settings as environment variables (the job lease among them). */
  readonly environment: Readonly<Record<string, string>>;
  /**
   * How often it runs.
   * @default every minute (EventBridge's finest rate): a job stays unresolved at most its lease
   * plus this plus one pass
   */
  readonly interval?: Duration;
  /** @default RemovalPolicy.RETAIN */
  readonly logRemovalPolicy?: RemovalPolicy;
}

export class SweeperFunction extends Construct {
  readonly function: ServiceFunction;

  constructor(scope: Construct, id: string, props: SweeperFunctionProps) {
    super(scope, id);
    this.function = new ServiceFunction(this, 'Function', {
      resource: 'sweeper',
      description: 'Ends jobs whose request died and reconciles their render units',
      // A pass reads at most 500 expired entries, each a few DynamoDB calls of milliseconds.
      memorySizeMiB: 256,
      timeout: Duration.seconds(50),
      logRemovalPolicy: props.logRemovalPolicy,
    });
    for (const [name, value] of Object.entries({
      ...props.environment,
      ...bindingEnvironment('table', { tableName: props.table.tableName }),
    })) {
      this.function.addEnvironment(name, value);
    }
    props.table.grant(
      this.function,
      'dynamodb:Query',
      'dynamodb:GetItem',
      'dynamodb:UpdateItem',
      // A delivery is recorded (a conditional put of a new item) before its message is queued.
      'dynamodb:PutItem',
    );
    this.function.bindRenderQueue(props.renderQueue);
    this.function.bindWebhookQueue(props.webhookQueue);
    new Rule(this, 'Schedule', {
      description: 'Runs the sweeper',
      schedule: Schedule.rate(props.interval ?? Duration.minutes(1)),
      targets: [new LambdaFunction(this.function, { retryAttempts: 0 })],
    });
  }
}
