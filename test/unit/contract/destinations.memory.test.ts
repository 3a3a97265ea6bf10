/** The destination contracts (test/contract/destinations.contract.ts) on the memory store and writer. */
import {
  createMemoryDeliveryRecords,
  createMemoryDestinationStore,
  createMemoryDestinationWriter,
} from '../../../functions/adapters/memory/destinations.js';
import type { DestinationTarget } from '../../../functions/domain/destinations/destinations.js';
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
