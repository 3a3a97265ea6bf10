/**
 * The service's single DynamoDB table, shaped by `tableSchema` (functions/table.ts), the same data
 * the local stack builds its dynalite table from, so the two cannot drift.
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, BillingMode, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import type { Construct } from 'constructs';
import { tableSchema } from '../functions/table.js';

export interface ServiceTableProps {
  /**
   * Keep the table (accounts, API key digests, templates, jobs) when the stack is deleted.
   * @default true
   */
  readonly retainOnDelete?: boolean;
}

export class ServiceTable extends Table {
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
  }
}
