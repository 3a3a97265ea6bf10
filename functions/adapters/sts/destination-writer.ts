/**
 * The destination writer (domain/destinations/destinations.ts) on AWS: STS AssumeRole of the
 * customer's role with the destination's external id, then S3 PutObject / DeleteObject in their
 * bucket with the temporary credentials. The endpoints are AWS's for the bucket's region; the
 * local stack alone names others (its STS stand-in, lib/local/sts.ts, and its S3 server), and
 * never from what a caller sent, so a destination reaches no private address.
 *
 * Credentials are kept per role and external id until a minute before they expire: a batch's
 * thousand deliveries assume the role once, not a thousand times.
 */
import { DeleteObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { AssumeRoleCommand, type AssumeRoleCommandOutput, STSClient } from '@aws-sdk/client-sts';
import {
  type DestinationFailure,
  type DestinationTarget,
  DestinationWriteError,
  type DestinationWriter,
} from '../../domain/destinations/destinations.js';

export interface DestinationWriterOptions {
  /** The local stack's STS stand-in; in the cloud, AWS's regional endpoint. */
  readonly stsEndpoint?: string;
  /** The local stack's S3 server (path-style); in the cloud, AWS's. */
  readonly s3Endpoint?: string;
  /** The service's own credentials for STS (the local stack's); in the cloud, the function's role. */
  readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string };
  /** The assumed session's length. @default 900 (STS's shortest) */
  readonly sessionSeconds?: number;
  readonly now?: () => number;
}

interface Session {
  readonly s3: S3Client;
  readonly expiresAt: number;
}

const CODE = (e: unknown): string => {
  const err = e as { name?: string; Code?: string; $metadata?: { httpStatusCode?: number } };
  return err.name ?? err.Code ?? 'Error';
};

const s3Failure = (e: unknown, onPut: boolean): DestinationWriteError => {
  const code = CODE(e);
  const status = (e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  let reason: DestinationFailure = 'unreachable';
  if (code === 'NoSuchBucket') reason = 'bucket_not_found';
  else if (code === 'PermanentRedirect' || code === 'AuthorizationHeaderMalformed' || status === 301)
    reason = 'wrong_region';
  else if (code === 'AccessDenied' || status === 403) reason = onPut ? 'put_denied' : 'delete_denied';
  return new DestinationWriteError(reason, code);
};

export const createStsDestinationWriter = (options: DestinationWriterOptions = {}): DestinationWriter => {
  const now = options.now ?? Date.now;
  const sessionSeconds = options.sessionSeconds ?? 900;
  const stsClients = new Map<string, STSClient>();
  const sessions = new Map<string, Session>();

  const sts = (region: string) => {
    let client = stsClients.get(region);
    if (!client) {
      client = new STSClient({
        region,
        ...(options.stsEndpoint ? { endpoint: options.stsEndpoint } : {}),
        ...(options.credentials ? { credentials: options.credentials } : {}),
      });
      stsClients.set(region, client);
    }
    return client;
  };

  const session = async (target: DestinationTarget): Promise<S3Client> => {
    const id = `${target.roleArn}\n${target.externalId}\n${target.region}`;
    const kept = sessions.get(id);
    if (kept && kept.expiresAt - 60_000 > now()) return kept.s3;
    let assumed: AssumeRoleCommandOutput;
    try {
      assumed = await sts(target.region).send(
        new AssumeRoleCommand({
          RoleArn: target.roleArn,
          ExternalId: target.externalId,
          RoleSessionName: 'pdf-service-delivery',
          DurationSeconds: sessionSeconds,
        }),
      );
    } catch (e) {
      const code = CODE(e);
      const status = (e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      throw new DestinationWriteError(
        code === 'AccessDenied' || status === 403 ? 'assume_role_denied' : 'unreachable',
        code,
      );
    }
    const c = assumed.Credentials;
    if (!c?.AccessKeyId || !c.SecretAccessKey) {
      throw new DestinationWriteError('unreachable', 'NoCredentials');
    }
    const s3 = new S3Client({
      region: target.region,
      credentials: {
        accessKeyId: c.AccessKeyId,
        secretAccessKey: c.SecretAccessKey,
        ...(c.SessionToken ? { sessionToken: c.SessionToken } : {}),
      },
      ...(options.s3Endpoint ? { endpoint: options.s3Endpoint, forcePathStyle: true } : {}),
      // A region mismatch is the customer's to fix, not a redirect to follow.
      followRegionRedirects: false,
    });
    kept?.s3.destroy();
    sessions.set(id, {
      s3,
      expiresAt: c.Expiration ? c.Expiration.getTime() : now() + sessionSeconds * 1000,
    });
    return s3;
  };

  return {
    async put(target, key, body, contentType) {
      const s3 = await session(target);
      try {
        const out = await s3.send(
          new PutObjectCommand({ Bucket: target.bucket, Key: key, Body: body, ContentType: contentType }),
        );
        return { etag: out.ETag ?? '' };
      } catch (e) {
        throw s3Failure(e, true);
      }
    },
    async delete(target, key) {
      const s3 = await session(target);
      try {
        await s3.send(new DeleteObjectCommand({ Bucket: target.bucket, Key: key }));
      } catch (e) {
        throw s3Failure(e, false);
      }
    },
  };
};
