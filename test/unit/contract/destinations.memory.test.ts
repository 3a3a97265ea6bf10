/** The destination contracts (test/contract/destinations.contract.ts) on the memory store and writer. */

import {
  createMemoryDeliveryRecords,
  createMemoryDestinationStore,
  createMemoryDestinationWriter,
} from '../../../functions/adapters/memory/destinations.js';
import { createMemoryTable, jobKey } from '../../../functions/adapters/memory/table.js';
import type { DestinationTarget } from '../../../functions/domain/destinations/destinations.js';
import { newJobRecord } from '../../../functions/domain/jobs/jobs.js';
import {
  deliveryRecordsContract,
  destinationStoreContract,
  destinationWriterContract,
} from '../../contract/destinations.contract.js';

destinationStoreContract({ name: 'memory', create: () => createMemoryDestinationStore() });

const writer = createMemoryDestinationWriter();
const target: DestinationTarget = {
  bucket: 'customer-bucket',
  region: 'eu-west-1',
  roleArn: 'arn:aws:iam::123456789012:role/pdf-delivery',
  externalId: 'pdf-service-memory',
};
writer.addBucket(target.bucket, {
  region: target.region,
  roleArn: target.roleArn,
  externalId: target.externalId,
});

destinationWriterContract({
  name: 'memory',
  world: () => ({ writer, target, read: async (key) => writer.objects(target.bucket).get(key) }),
});

deliveryRecordsContract({
  name: 'memory',
  create: () => ({ records: createMemoryDeliveryRecords(), job: async () => {} }),
});

// Kept on the memory table's job entry, as the DynamoDB adapter keeps it on the job's item.
deliveryRecordsContract({
  name: 'memory, on the job',
  create: () => {
    const table = createMemoryTable();
    const at = new Date().toISOString();
    return {
      records: createMemoryDeliveryRecords(table),
      job: async (accountId: string, jobId: string) => {
        table.jobs.set(jobKey(accountId, jobId), {
          job: newJobRecord(
            {
              id: jobId,
              account_id: accountId,
              template_id: null,
              template_version: null,
              object_key: `pdf/${accountId}/${jobId}.pdf`,
            },
            at,
          ),
          expiresAt: Number.MAX_SAFE_INTEGER,
        });
      },
    };
  },
});
