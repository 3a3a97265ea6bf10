/**
 * The renderer contract (test/contract/renderer.contract.ts) on the Chromium renderer in this
 * process (functions/renderer/in-process.ts), uploading to s3rver through the S3 adapter's links.
 */
import { createS3PdfStorage } from '../../../functions/adapters/s3/pdf-storage.js';
import { rendererContract } from '../../contract/renderer.contract.js';
import { useBucket } from '../../helpers/s3rver.js';

const bucket = useBucket();

rendererContract({
  name: 'Chromium',
  async create() {
    const { createInProcessRenderer } = await import('../../../functions/renderer/in-process.js');
    const renderer = createInProcessRenderer();
    return {
      renderer,
      storage: createS3PdfStorage(bucket.s3, bucket.name, {
        downloadUrlTtlSeconds: 60,
        uploadUrlTtlSeconds: 60,
      }),
      close: () => renderer.close(),
    };
  },
});
