import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import contentDisposition from 'content-disposition';
import type { PdfStorage } from '../../domain/common/ports.js';
import { asciiFileName } from '../../domain/renders/file-name.js';

const PDF = 'application/pdf';

export const createS3PdfStorage = (
  s3: S3Client,
  bucket: string,
  options: { downloadUrlTtlSeconds: number; uploadUrlTtlSeconds: number },
): PdfStorage => ({
  async uploadTarget(objectKey) {
    const url = await getSignedUrl(
      s3,
      new PutObjectCommand({ Bucket: bucket, Key: objectKey, ContentType: PDF }),
      {
        expiresIn: options.uploadUrlTtlSeconds,
      },
    );
    return { url, headers: { 'Content-Type': PDF } };
  },
  downloadUrl(objectKey, filename) {
    return getSignedUrl(
      s3,
      new GetObjectCommand({
        Bucket: bucket,
        Key: objectKey,
        ResponseContentType: PDF,
        // RFC 6266: an ASCII filename for old clients, filename* (UTF-8) when the name is not ASCII.
        ResponseContentDisposition: contentDisposition(filename, { fallback: asciiFileName(filename) }),
      }),
      { expiresIn: options.downloadUrlTtlSeconds },
    );
  },
});
