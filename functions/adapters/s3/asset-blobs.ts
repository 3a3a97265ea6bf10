/**
 * Assets' bytes in the bucket (domain/assets/assets.ts, AssetBlobs), under `assets/<account>/<upload
 * id>`: written and deleted by the assets function, read by the renderer only through a presigned
 * GET the render's caller signs (the renderer has no AWS permissions of its own).
 */
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { AssetBlobs } from '../../domain/assets/assets.js';

export const createS3AssetBlobs = (
  s3: S3Client,
  bucket: string,
  options: { readUrlTtlSeconds: number; downloadUrlTtlSeconds: number },
): AssetBlobs => ({
  async put(objectKey, bytes, contentType) {
    await s3.send(
      new PutObjectCommand({ Bucket: bucket, Key: objectKey, Body: bytes, ContentType: contentType }),
    );
  },
  async delete(objectKey) {
    await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: objectKey }));
  },
  readUrl(objectKey) {
    return getSignedUrl(s3, new GetObjectCommand({ Bucket: bucket, Key: objectKey }), {
      expiresIn: options.readUrlTtlSeconds,
    });
  },
  downloadUrl(objectKey, filename, contentType) {
    return getSignedUrl(
      s3,
      new GetObjectCommand({
        Bucket: bucket,
        Key: objectKey,
        ResponseContentType: contentType,
        ResponseContentDisposition: `attachment; filename="${filename}"`,
      }),
      { expiresIn: options.downloadUrlTtlSeconds },
    );
  },
});
