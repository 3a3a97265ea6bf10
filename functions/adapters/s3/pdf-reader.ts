/**
 * A stored PDF's bytes (GetObject on the PDF bucket): what the deliverer copies into a customer's
 * bucket (domain/destinations/deliveries.ts). The function's bucket grant on `pdf/*` is what it uses.
 */
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';

export const createS3PdfReader =
  (s3: S3Client, bucket: string) =>
  async (objectKey: string): Promise<Uint8Array> => {
    const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: objectKey }));
    if (!out.Body) throw new Error(`the object ${objectKey} has no body`);
    return out.Body.transformToByteArray();
  };
