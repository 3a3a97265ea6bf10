/**
 * The service's single DynamoDB table, shaped by `tableSchema` (functions/table.ts), the same data
 * the local stack builds its dynalite table from, so the two cannot drift.
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import {
  Alarm,
  ComparisonOperator,
  type IMetric,
  MathExpression,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { AttributeType, BillingMode, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import type { Construct } from 'constructs';
import { tableSchema } from '../functions/table.js';
import { withRunbook } from './runbook.js';

export interface ServiceTableProps {
  /**
   * Keep the table (accounts, API key digests, templates, jobs) when the stack is deleted.
   * @default true
   */
  readonly retainOnDelete?: boolean;
}

export class ServiceTable extends Table {
  /** Requests throttled on the table or any of its indexes. */
  readonly throttlesAlarm: Alarm;

  constructor(scope: Construct, id: string, props: ServiceTableProps = {}) {
    const retain = props.retainOnDelete ?? true;
    super(scope, id, {
      partitionKey: { name: tableSchema.partitionKey, type: AttributeType.STRING },
      sortKey: { name: tableSchema.sortKey, type: AttributeType.STRING },
      // Traffic follows render requests, which are bursty and unknown in advance.
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      encryption: TableEncryption.AWS_MANAGED,
      timeToLiveAttribute: tableSchema.ttlAttribute,
      deletionProtection: retain,
      removalPolicy: retain ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });
    for (const index of tableSchema.globalSecondaryIndexes) {
      this.addGlobalSecondaryIndex({
        indexName: index.indexName,
        partitionKey: { name: index.partitionKey, type: AttributeType.STRING },
        sortKey: { name: index.sortKey, type: AttributeType.STRING },
      });
    }

    // On demand, DynamoDB throttles past twice the previous peak or on one hot partition key; the
    // SDK retries, so a throttle is a slower request first and a failed one after the retries. An
    // index's throttles are its own metrics (with GlobalSecondaryIndexName), and an index that
    // cannot keep up throttles the table's writes too.
    const period = Duration.minutes(5);
    const usingMetrics: Record<string, IMetric> = {};
    const targets = [undefined, ...tableSchema.globalSecondaryIndexes.map((i) => i.indexName)];
    targets.forEach((indexName, i) => {
      for (const kind of ['Read', 'Write'] as const) {
        usingMetrics[`${kind.toLowerCase()}${i}`] = this.metric(`${kind}ThrottleEvents`, {
          period,
          statistic: 'Sum',
          dimensionsMap: {
            TableName: this.tableName,
            ...(indexName ? { GlobalSecondaryIndexName: indexName } : {}),
          },
        });
      }
    });
    this.throttlesAlarm = new Alarm(this, 'ThrottlesAlarm', {
      alarmDescription: withRunbook(
        'DynamoDB throttled requests on the table or an index (reads or writes past on-demand capacity, or a hot key)',
        'table-throttles',
      ),
      metric: new MathExpression({
        expression: Object.keys(usingMetrics)
          .map((id) => `FILL(${id}, 0)`)
          .join(' + '),
        usingMetrics,
        period,
        label: 'Table throttle events (reads and writes, table and indexes)',
      }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
  }
}
