/**
 * A local STS stand-in (issue 36): the one call destinations make, AssumeRole, answered as AWS
 * STS answers it, for the roles a test or the local stack registers, each with the external id
 * its trust policy requires. A role unknown, or named with another external id, is refused
 * (403 AccessDenied, as STS refuses it); a role assumed gets the local S3 server's credentials,
 * the one access key s3rver knows, so that the destination writer then puts into the local
 * S3 server's buckets exactly as it puts into a customer's bucket in the cloud.
 *
 * The local stack's roles are the trust policies of LOCAL_ROLES_FILE in its data directory
 * (`{"<role ARN>": {"externalId": "pdf-service-..."}}`), read at every call: writing the file is
 * what writing a role's trust policy is in the cloud (docs/api/destinations.md).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { LOCAL_CREDENTIALS } from './credentials.js';
import { closeServer, listen } from './http-server.js';

export interface LocalRole {
  /** The external id the role's trust policy requires (sts:ExternalId). */
  readonly externalId: string;
}

export interface LocalSts {
  readonly endpoint: string;
  /** A role the customer created, trusting the service with `externalId`. */
  putRole(roleArn: string, role: LocalRole): void;
  deleteRole(roleArn: string): void;
  /** AssumeRole calls answered so far (granted or not). */
  readonly calls: number;
  close(): Promise<void>;
}

const xml = (value: string) =>
  value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const error = (code: string, message: string) =>
  `<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type><Code>${code}</Code><Message>${xml(message)}</Message></Error><RequestId>${randomUUID()}</RequestId></ErrorResponse>`;

const MAX_BODY_BYTES = 64 * 1024;

/** The local stack's roles, in its data directory. */
export const LOCAL_ROLES_FILE = 'local-roles.json';

const rolesIn = (file: string | undefined): Readonly<Record<string, LocalRole>> => {
  if (!file) return {};
  try {
    const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
    return parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, LocalRole>) : {};
  } catch {
    return {};
  }
};

export const startLocalSts = async (
  options: { readonly host?: string; readonly rolesFile?: string } = {},
): Promise<LocalSts> => {
  const host = options.host ?? '127.0.0.1';
  const roles = new Map<string, LocalRole>();
  let calls = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => {
      const answer = (status: number, body: string) => {
        res.writeHead(status, { 'content-type': 'text/xml' });
        res.end(body);
      };
      if (req.method !== 'POST' || size > MAX_BODY_BYTES) {
        answer(400, error('InvalidAction', 'only POST AssumeRole'));
        return;
      }
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      if (form.get('Action') !== 'AssumeRole') {
        answer(400, error('InvalidAction', `${form.get('Action') ?? 'no action'} is not supported`));
        return;
      }
      calls++;
      const roleArn = form.get('RoleArn') ?? '';
      const role = roles.get(roleArn) ?? rolesIn(options.rolesFile)[roleArn];
      if (!role || typeof role.externalId !== 'string' || form.get('ExternalId') !== role.externalId) {
        answer(
          403,
          error('AccessDenied', `User is not authorized to perform: sts:AssumeRole on resource: ${roleArn}`),
        );
        return;
      }
      const seconds = Number(form.get('DurationSeconds') ?? 3600);
      const expiration = new Date(Date.now() + seconds * 1000).toISOString();
      const session = form.get('RoleSessionName') ?? 'session';
      answer(
        200,
        `<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleResult><Credentials><AccessKeyId>${LOCAL_CREDENTIALS.accessKeyId}</AccessKeyId><SecretAccessKey>${LOCAL_CREDENTIALS.secretAccessKey}</SecretAccessKey><SessionToken>${randomBytes(16).toString('hex')}</SessionToken><Expiration>${expiration}</Expiration></Credentials><AssumedRoleUser><AssumedRoleId>AROALOCAL:${xml(session)}</AssumedRoleId><Arn>${xml(roleArn.replace(':iam::', ':sts::').replace(':role/', ':assumed-role/'))}/${xml(session)}</Arn></AssumedRoleUser></AssumeRoleResult><ResponseMetadata><RequestId>${randomUUID()}</RequestId></ResponseMetadata></AssumeRoleResponse>`,
      );
    });
  });
  const { port } = await listen(server, 0, host);
  return {
    endpoint: `http://${host}:${port}`,
    putRole: (roleArn, role) => void roles.set(roleArn, role),
    deleteRole: (roleArn) => void roles.delete(roleArn),
    get calls() {
      return calls;
    },
    close: () => closeServer(server, 1000),
  };
};
