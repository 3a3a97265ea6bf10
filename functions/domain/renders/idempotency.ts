/**
 * Idempotent renders (contract extension): within 24 hours, the same Idempotency-Key from the
 * same account with the same body gets the first request's answer without rendering or counting
 * again; concurrent duplicates render once (the first claims the key, the others wait for it).
 * A claim carries a short lease that its request renews while it renders, so a render whose
 * process died holds its key only that long: a retry then takes it over and renders once. The
 * store is a port; the DynamoDB adapter is functions/adapters/dynamodb/idempotency.ts.
 */
import { type ErrorDetail, ServiceError } from '../common/errors.js';
import type { Diagnostics } from '../common/ports.js';

/**
 * How long a key's record is kept (an Idempotency-Key's, and a batch item's key): the contract's
 * 24 hours, the same for every store.
 */
export const IDEMPOTENCY_RETENTION_SECONDS = 24 * 3600;

/** 1-255 printable ASCII characters. */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

export const checkIdempotencyKey = (key: string | undefined): string | undefined => {
  if (key === undefined) return undefined;
  if (!IDEMPOTENCY_KEY_PATTERN.test(key)) {
    const issue = 'must be 1-255 printable ASCII characters';
    throw new ServiceError('VALIDATION_ERROR', `Idempotency-Key header ${issue}`, {
      details: [{ field: 'Idempotency-Key', issue }],
    });
  }
  return key;
};

/** What is replayed: the job to show (with a fresh link), or the error (with its job, if any). */
export interface StoredAnswer {
  readonly job_id: string | null;
  readonly error: {
    readonly code: string;
    readonly message: string;
    readonly details?: readonly ErrorDetail[];
    readonly diagnostics?: Diagnostics;
  } | null;
}

export type Claim = { readonly kind: 'claimed' } | { readonly kind: 'replay'; readonly answer: StoredAnswer };

/** `hash` is the request body's digest: the same key with another body is refused. */
export interface IdempotencyStore {
  /** Claim the key for this request, or get the answer to replay (waiting while a twin renders). */
  claim(accountId: string, key: string, hash: string): Promise<Claim>;
  finish(accountId: string, key: string, answer: StoredAnswer): Promise<void>;
  /** The answer a request with this key and body would replay now, if there is one. Reads only. */
  finishedAnswer(accountId: string, key: string, hash: string): Promise<StoredAnswer | undefined>;
  /** Extend the claim's lease while its request renders; false when the claim is no longer in progress. */
  renew(accountId: string, key: string): Promise<boolean>;
  /** Forget a claim whose request ended in a fault of ours, so that a retry can render. */
  release(accountId: string, key: string): Promise<void>;
}

/**
 * The store with every body hash keyed first (`digest`: an HMAC under a key derived from the
 * deployment's secret): a body holds a `protection`'s passwords, so a plain SHA-256 of it kept
 * for 24 hours could be tested offline against guessed passwords by whoever reads the table. The
 * keyed digest still tells one body from another, which is all the store compares.
 */
export const keyedIdempotency = (
  store: IdempotencyStore,
  digest: (hash: string) => Promise<string>,
): IdempotencyStore => ({
  claim: async (accountId, key, hash) => store.claim(accountId, key, await digest(hash)),
  finishedAnswer: async (accountId, key, hash) => store.finishedAnswer(accountId, key, await digest(hash)),
  finish: (accountId, key, answer) => store.finish(accountId, key, answer),
  renew: (accountId, key) => store.renew(accountId, key),
  release: (accountId, key) => store.release(accountId, key),
});
