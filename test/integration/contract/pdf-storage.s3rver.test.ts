/** The storage contract (test/contract/pdf-storage.contract.ts) on the S3 adapter against s3rver, in real time. */
import { createS3PdfStorage } from '../../../functions/adapters/s3/pdf-storage.js';
import { pdfStorageContract } from '../../contract/pdf-storage.contract.js';
import { sleep } from '../../contract/wait.js';
import { useBucket } from '../../helpers/s3rver.js';

const bucket = useBucket();

pdfStorageContract({
  name: 's3rver',
  async create(ttl) {
    return {
      storage: createS3PdfStorage(bucket.s3, bucket.name, ttl),
      // SigV4 expiry is judged in whole seconds from the signing second: a little over.
      elapse: (seconds) => sleep(seconds * 1000 + 200),
      close: async () => {},
    };
  },
});
