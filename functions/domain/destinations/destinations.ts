/**
 * Destinations (issue 36, item 3): an S3 bucket in the customer's own AWS account that the
 * service copies a job's PDF into, reached by assuming a role the customer created for it.
 *
 * The confused-deputy pattern AWS documents: every destination gets an external id the service
 * generates (EXTERNAL_ID_PREFIX and an HMAC of the account and the role under the service's key),
 * shown in its answers; the customer's role trusts the service's account only with
 * `"Condition": {"StringEquals": {"sts:ExternalId": ...}}`, so that another customer of the
 * service cannot name their role and have us write into it (they would get another id). Being a
 * function of the account and the role, the id is known before the role trusts it: the first
 * creation is refused (assume_role_denied) with the id to write into the trust policy, and the
 * same request succeeds once it is there. The service's own role may assume only roles when it
 * passes an id with that prefix (lib/).
 *
 * Creating one proves it: the role is assumed, a probe object written and deleted, and what fails
 * is refused at once (422 DESTINATION_UNREACHABLE) with the reason (`assume_role_denied`,
 * `bucket_not_found`, `put_denied`, ...). The bucket and region are checked against AWS's naming
 * rules; the endpoint is AWS's (the local stack's S3 server locally), never one the caller names.
 *
 * `key_template` is a Jinja2 template of the job (`invoices/{{ job.created_at[:7] }}/{{ job.id }}.pdf`),
 * the project's engine (functions/templating), bounded in time and output: it is checked at
 * creation (it parses, reads only `job`, and makes a safe key of a sample job) and rendered when
 * the PDF is delivered. A key has no empty segment, no `.` or `..` segment, no control character,
 * and at most MAX_KEY_BYTES bytes.
 */

import { parseTemplate, renderTemplate, TemplateError } from '../../templating/index.js';
import { DESTINATION_EXTERNAL_ID_PREFIX } from '../../wiring.js';
import { isoNow } from '../common/clock.js';
import { ServiceError } from '../common/errors.js';
import { DESTINATION_ID, newDestinationId } from '../common/ids.js';
import type { Clock } from '../common/ports.js';
import type { Principal } from '../common/principal.js';

/** Every external id the service generates starts so; the deliverer's IAM policy requires it. */
export const EXTERNAL_ID_PREFIX = DESTINATION_EXTERNAL_ID_PREFIX;
/** S3's longest key, in UTF-8 bytes. */
export const MAX_KEY_BYTES = 1024;
/** At most this many destinations an account. */
export const MAX_DESTINATIONS = 20;
/** A key template's rendering: a key is short, and a template that loops is cut off. */
const KEY_RENDER_LIMITS = { maxOutputBytes: 4 * MAX_KEY_BYTES, timeLimitMs: 100 } as const;

export interface Destination {
  readonly id: string;
  readonly name: string;
  readonly bucket: string;
  readonly region: string;
  readonly role_arn: string;
  /** Generated here; the customer's trust policy requires it (sts:ExternalId). */
  readonly external_id: string;
  readonly key_template: string;
  /** Put before every rendered key (e.g. `pdf/`); empty when none. */
  readonly prefix: string;
  readonly created_at: string;
}

export interface StoredDestination extends Destination {
  readonly account_id: string;
}

export type DestinationCreateOutcome = { readonly kind: 'created' } | { readonly kind: 'limitReached' };

/** The destinations of each account (adapters/dynamodb/destinations.ts; a memory store for tests). */
export interface DestinationStore {
  /** Creates it unless the account has `limit` of them. */
  create(destination: StoredDestination, limit: number): Promise<DestinationCreateOutcome>;
  get(accountId: string, destinationId: string): Promise<StoredDestination | undefined>;
  /** Newest first. */
  list(accountId: string): Promise<StoredDestination[]>;
  /** Deletes it; the destination as it was, or undefined when the account has none such. */
  delete(accountId: string, destinationId: string): Promise<StoredDestination | undefined>;
}

/** Where a writer puts an object: the bucket, and the role it assumes to reach it. */
export interface DestinationTarget {
  readonly bucket: string;
  readonly region: string;
  readonly roleArn: string;
  readonly externalId: string;
}

/** Why a destination could not be written to: what the customer fixes on their side. */
export const DESTINATION_FAILURES = {
  assume_role_denied:
    "the role could not be assumed: its trust policy must allow the service's account with this external id (sts:ExternalId)",
  bucket_not_found: 'the bucket does not exist',
  wrong_region: 'the bucket is in another region',
  put_denied: "the role may not put objects in the bucket (s3:PutObject on the key's prefix)",
  delete_denied: "the role may not delete the probe object (s3:DeleteObject on the key's prefix)",
  unreachable: 'AWS could not be reached, or answered with an error; try again',
} as const;

export type DestinationFailure = keyof typeof DESTINATION_FAILURES;

/** A writer's refusal, by reason; `detail` is AWS's error name (never a credential). */
export class DestinationWriteError extends Error {
  constructor(
    readonly reason: DestinationFailure,
    readonly detail: string,
  ) {
    super(`${reason}: ${detail}`);
    this.name = 'DestinationWriteError';
  }
}

/**
 * Writes objects into a customer's bucket through their role (adapters/sts/destination-writer.ts:
 * STS AssumeRole with the external id, then S3 with the temporary credentials; a memory writer for
 * tests). Throws DestinationWriteError for what the customer's side refused or lacks.
 */
export interface DestinationWriter {
  put(
    target: DestinationTarget,
    key: string,
    body: Uint8Array,
    contentType: string,
  ): Promise<{ readonly etag: string }>;
  delete(target: DestinationTarget, key: string): Promise<void>;
}

/** What a key template sees of a job. */
export interface KeyTemplateJob {
  readonly id: string;
  readonly created_at: string;
  readonly kind: string;
  readonly reference: string | null;
  readonly file_name: string | null;
  readonly batch_id: string | null;
  readonly template_id: string | null;
}

export const targetOf = (d: Destination): DestinationTarget => ({
  bucket: d.bucket,
  region: d.region,
  roleArn: d.role_arn,
  externalId: d.external_id,
});

const invalid = (field: string, issue: string) =>
  new ServiceError('INVALID_DESTINATION', `${field} ${issue}`, { details: [{ field, issue }] });

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
const CONTROL = /[\u0000-\u001f\u007f]/;

/** Why `key` is no safe S3 key (empty, `//`, a `.` or `..` segment, a control, too long), or undefined. */
export const keyProblem = (key: string): string | undefined => {
  if (key.length === 0) return 'makes an empty key';
  if (CONTROL.test(key)) return 'makes a key with a control character';
  if (Buffer.byteLength(key, 'utf8') > MAX_KEY_BYTES) return `makes a key longer than ${MAX_KEY_BYTES} bytes`;
  const segments = key.split('/');
  if (segments.some((s) => s === ''))
    return 'makes a key with an empty segment (a leading, trailing or double /)';
  if (segments.some((s) => s === '.' || s === '..')) return 'makes a key with a . or .. segment';
  return undefined;
};

/** The object key of `job` at `destination`: its prefix and its template rendered; throws INVALID_DESTINATION. */
export const destinationKey = (
  destination: Pick<Destination, 'prefix' | 'key_template'>,
  job: KeyTemplateJob,
): string => {
  let rendered: string;
  try {
    rendered = renderTemplate(destination.key_template, { job: { ...job } }, KEY_RENDER_LIMITS);
  } catch (e) {
    if (e instanceof TemplateError) throw invalid('key_template', `cannot be rendered: ${e.message}`);
    throw e;
  }
  const key = `${destination.prefix}${rendered.trim()}`;
  const problem = keyProblem(key);
  if (problem) throw invalid('key_template', problem);
  return key;
};

/** A job as a template sees it at creation: what every job has, at `now`. */
const sampleJob = (now: Date): KeyTemplateJob => ({
  id: 'job_01JDESTINATI0NSAMP1EJ0B000',
  created_at: isoNow(now),
  kind: 'render',
  reference: 'sample-reference',
  file_name: 'sample.pdf',
  batch_id: null,
  template_id: null,
});

/** A key template parses, reads nothing but `job`, and makes a safe key of a sample job. */
export const checkKeyTemplate = (prefix: string, template: string, now: Date): void => {
  try {
    const { undeclared } = parseTemplate(template, { cache: false });
    const others = undeclared.filter((name) => name !== 'job');
    if (others.length > 0) {
      throw invalid(
        'key_template',
        `reads ${others.map((n) => `'${n}'`).join(', ')}: a key template sees only job`,
      );
    }
  } catch (e) {
    if (e instanceof TemplateError) throw invalid('key_template', e.message);
    throw e;
  }
  destinationKey({ prefix, key_template: template }, sampleJob(now));
};

/**
 * The external id of an account's role: EXTERNAL_ID_PREFIX and a keyed digest of both (an HMAC
 * under a key derived from the service's secret: adapters/secrets-manager/webhook-secret-box.ts).
 */
export type ExternalIds = (accountId: string, roleArn: string) => Promise<string>;

/** The probe object creation writes and deletes, beside what the destination will hold. */
export const probeKey = (prefix: string, id: string): string => `${prefix}.pdf-service-probe-${id}`;

const notFound = (id: string) => new ServiceError('DESTINATION_NOT_FOUND', `Destination ${id} was not found`);

/** What a render, batch or merge that names `destination_id` is checked against at acceptance. */
export type DestinationLookup = Pick<DestinationStore, 'get'>;

/**
 * A `destination_id` a render, batch or merge names: the caller's own, else 404
 * DESTINATION_NOT_FOUND before anything is held (another account's answers the same as an
 * unknown one). No lookup (a deployment without destinations) refuses every id.
 */
export const checkDestination = async (
  lookup: DestinationLookup | undefined,
  accountId: string,
  destinationId: string | null | undefined,
): Promise<void> => {
  if (destinationId === null || destinationId === undefined) return;
  if (!DESTINATION_ID.test(destinationId) || !lookup || !(await lookup.get(accountId, destinationId)))
    throw notFound(destinationId);
};

export const unreachable = (e: DestinationWriteError, externalId: string) => {
  const field =
    e.reason === 'assume_role_denied' ? 'role_arn' : e.reason === 'wrong_region' ? 'region' : 'bucket';
  const trust = e.reason === 'assume_role_denied' ? `; the external id is ${externalId}` : '';
  return new ServiceError(
    'DESTINATION_UNREACHABLE',
    `The destination does not work (${e.reason}): ${DESTINATION_FAILURES[e.reason]}${trust} (${e.detail})`,
    {
      details: [{ field, issue: `${e.reason}: ${DESTINATION_FAILURES[e.reason]}${trust}`, rule: e.reason }],
    },
  );
};

export const destinationView = (d: Destination): Destination => ({
  id: d.id,
  name: d.name,
  bucket: d.bucket,
  region: d.region,
  role_arn: d.role_arn,
  external_id: d.external_id,
  key_template: d.key_template,
  prefix: d.prefix,
  created_at: d.created_at,
});

export interface NewDestination {
  readonly name: string;
  readonly bucket: string;
  readonly region: string;
  readonly role_arn: string;
  readonly key_template: string;
  readonly prefix?: string | undefined;
}

export interface DestinationDeps {
  readonly store: DestinationStore;
  readonly writer: () => DestinationWriter;
  readonly externalIds: ExternalIds;
  readonly clock: Clock;
  /** @default MAX_DESTINATIONS */
  readonly maxDestinations?: number;
}

/** The destinations resource's use cases (session only). */
export const createDestinationManagement = (deps: DestinationDeps) => {
  const { store, clock } = deps;
  const limit = deps.maxDestinations ?? MAX_DESTINATIONS;
  return {
    async create(principal: Principal, input: NewDestination): Promise<Destination> {
      const now = clock.now();
      const prefix = input.prefix ?? '';
      checkKeyTemplate(prefix, input.key_template, now);
      const id = newDestinationId();
      const stored: StoredDestination = {
        id,
        name: input.name,
        bucket: input.bucket,
        region: input.region,
        role_arn: input.role_arn,
        external_id: `${EXTERNAL_ID_PREFIX}${await deps.externalIds(principal.accountId, input.role_arn)}`,
        key_template: input.key_template,
        prefix,
        created_at: isoNow(now),
        account_id: principal.accountId,
      };
      // Proven before it is kept: a destination that does not work is refused with the reason.
      const writer = deps.writer();
      const target = targetOf(stored);
      const probe = probeKey(prefix, id);
      try {
        await writer.put(
          target,
          probe,
          new TextEncoder().encode('pdf-service destination probe\n'),
          'text/plain',
        );
        await writer.delete(target, probe);
      } catch (e) {
        if (e instanceof DestinationWriteError) throw unreachable(e, stored.external_id);
        throw e;
      }
      const outcome = await store.create(stored, limit);
      if (outcome.kind === 'limitReached') {
        throw new ServiceError(
          'DESTINATION_LIMIT_REACHED',
          `An account has at most ${limit} destinations: delete one first`,
        );
      }
      return destinationView(stored);
    },
    list: async (principal: Principal): Promise<Destination[]> =>
      (await store.list(principal.accountId)).map(destinationView),
    async get(principal: Principal, id: string): Promise<Destination> {
      const found = DESTINATION_ID.test(id) ? await store.get(principal.accountId, id) : undefined;
      if (!found) throw notFound(id);
      return destinationView(found);
    },
    async delete(principal: Principal, id: string): Promise<Destination> {
      const deleted = DESTINATION_ID.test(id) ? await store.delete(principal.accountId, id) : undefined;
      if (!deleted) throw notFound(id);
      return destinationView(deleted);
    },
  };
};

export type DestinationManagement = ReturnType<typeof createDestinationManagement>;

/** A render, batch or merge names a destination of the caller's: 404 otherwise, nothing charged. */
export const createDestinationResolver = (store: DestinationStore) => ({
  async find(accountId: string, id: string): Promise<StoredDestination> {
    const found = DESTINATION_ID.test(id) ? await store.get(accountId, id) : undefined;
    if (!found) throw notFound(id);
    return found;
  },
});
