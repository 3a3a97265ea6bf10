/** The order stores' contract (test/contract/orders.contract.ts) on the S3 adapters against s3rver. */
import { createS3BatchOrders } from '../../../functions/adapters/s3/batch-orders.js';
import { createS3RenderOrders } from '../../../functions/adapters/s3/render-orders.js';
import { ordersContract } from '../../contract/orders.contract.js';
import { useBucket } from '../../helpers/s3rver.js';

const bucket = useBucket();

ordersContract({
  name: 's3rver',
  create: () => ({
    renders: createS3RenderOrders(bucket.s3, bucket.name),
    batches: createS3BatchOrders(bucket.s3, bucket.name),
  }),
});
