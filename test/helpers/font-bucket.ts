/**
 * The fetched fonts' bucket for a synthesized renderer run outside AWS (the Lambda-like sandbox,
 * the bundle smoke test, the cold-start bench): an s3rver on loopback holding each fetched font
 * file in the bucket the template names in FETCHED_FONTS_BUCKET (in the cloud, the CDK assets
 * bucket) under the object key it names in FETCHED_FONTS (the S3 assets' keys). `environment` is
 * what the renderer process needs beside its template's: the endpoint and s3rver's credentials, and
 * the bucket's name as the template gives it (or a stand-in's, where the template's is a reference),
 * so that whichever of the two a caller lets win, the renderer fetches from where its template says.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { FETCHED_FONTS_VARIABLES, RENDERER_VARIABLES } from '../../functions/wiring.js';
import { resolveLayerFonts } from '../../lib/layer-fonts.js';
import { LOCAL_CREDENTIALS } from '../../lib/local/credentials.js';
import { createStorageWatch, guardS3rverWrites } from '../../lib/local/storage-faults.js';
import { PROJECT_ROOT } from '../../lib/service-function.js';

/** The bucket's name where the template's FETCHED_FONTS_BUCKET is a CloudFormation reference. */
const STAND_IN_BUCKET = 'fetched-fonts';

export interface FontBucket {
  /** FETCHED_FONTS_BUCKET's stand-in, AWS_ENDPOINT_URL_S3 and the credentials s3rver takes. */
  readonly environment: Record<string, string>;
  readonly endpoint: string;
  close(): Promise<void>;
}

/** `template`: the renderer's environment as synthesized (FETCHED_FONTS, FETCHED_FONTS_BUCKET). */
export const startFontBucket = async (template: Readonly<Record<string, unknown>>): Promise<FontBucket> => {
  const fetchedFonts = template[RENDERER_VARIABLES.fetchedFonts];
  if (typeof fetchedFonts !== 'string') throw new Error('font bucket: the template sets no FETCHED_FONTS');
  const named = template[FETCHED_FONTS_VARIABLES.bucket];
  const BUCKET = typeof named === 'string' ? named : STAND_IN_BUCKET;
  const dir = await mkdtemp(join(tmpdir(), 'font-bucket-'));
  const s3 = new S3rver({
    silent: true,
    directory: dir,
    vhostBuckets: false,
    configureBuckets: [{ name: BUCKET }],
  });
  await s3.configureBuckets();
  // The local stack's writes: a font is on disk before its PUT is answered (test/helpers/s3rver.ts).
  guardS3rverWrites(s3, createStorageWatch(dir));
  const server = createServer(s3.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const sources = new Map(resolveLayerFonts(PROJECT_ROOT).fetchedFiles.map((f) => [f.name, f.source]));
  const client = new S3Client({
    region: 'eu-west-1',
    endpoint,
    forcePathStyle: true,
    credentials: LOCAL_CREDENTIALS,
  });
  const families = JSON.parse(fetchedFonts) as Record<string, { key: string; file: string }[]>;
  for (const { key, file } of Object.values(families).flat()) {
    const source = sources.get(file);
    if (!source) throw new Error(`font bucket: ${file} is not among the layer's fetched fonts`);
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: readFileSync(source) }));
  }
  client.destroy();
  return {
    endpoint,
    environment: {
      [FETCHED_FONTS_VARIABLES.bucket]: BUCKET,
      [RENDERER_VARIABLES.fetchedFonts]: fetchedFonts,
      AWS_ENDPOINT_URL_S3: endpoint,
      AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(dir, { recursive: true, force: true });
    },
  };
};
