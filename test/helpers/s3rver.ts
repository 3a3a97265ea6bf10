/**
 * A bucket on its own: s3rver in a temporary directory on a random port, for contract tests that
 * need S3 and nothing else. Its writes are the local stack's (guardS3rverWrites): an object is on
 * disk before its PUT is answered, as S3 reads after writes; s3rver's own answered first, and a
 * GET right after a PUT read an empty archive once, on a busy machine.
 *
 *   const bucket = useBucket();
 *   it('stores', async () => { const storage = createS3PdfStorage(bucket.s3, bucket.name, ttl); ... });
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { afterAll, beforeAll } from 'vitest';
import { LOCAL_CREDENTIALS } from '../../lib/local/credentials.js';
import { closeServer, listen } from '../../lib/local/http-server.js';
import { createStorageWatch, guardS3rverWrites } from '../../lib/local/storage-faults.js';

export interface TestBucket {
  readonly s3: S3Client;
  readonly name: string;
}

export const useBucket = (name = 'contract-bucket'): TestBucket => {
  let dir = '';
  let server: Server | undefined;
  let s3: S3Client | undefined;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 's3rver-'));
    const s3rver = new S3rver({ silent: true, directory: dir, configureBuckets: [{ name, configs: [] }] });
    guardS3rverWrites(s3rver, createStorageWatch(dir));
    await s3rver.configureBuckets();
    server = createServer(s3rver.callback());
    const { port } = await listen(server, 0, '127.0.0.1');
    s3 = new S3Client({
      region: 'us-east-1',
      endpoint: `http://127.0.0.1:${port}`,
      credentials: LOCAL_CREDENTIALS,
      forcePathStyle: true,
    });
  });
  afterAll(async () => {
    s3?.destroy();
    if (server) await closeServer(server, 1000);
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  return {
    get s3() {
      if (!s3) throw new Error('the bucket is not ready: use it inside tests or hooks');
      return s3;
    },
    name,
  };
};
