import { createHash } from 'node:crypto';
import { encodeTime, monotonicFactory } from 'ulid';

const ulid = monotonicFactory();

/** Opaque ids: a type prefix and a time-sortable ULID (`job_01J…`). */
export const newJobId = (): string => `job_${ulid()}`;
export const newApiKeyId = (): string => `key_${ulid()}`;
/** `key_` and a ULID, as newApiKeyId makes them. */
export const API_KEY_ID = /^key_[0-9A-HJKMNP-TV-Z]{26}$/;
export const newTemplateId = (): string => `tpl_${ulid()}`;
/** `tpl_` and a ULID, as newTemplateId makes them. */
export const TEMPLATE_ID = /^tpl_[0-9A-HJKMNP-TV-Z]{26}$/;
export const newWebhookId = (): string => `wh_${ulid()}`;
/** `wh_` and a ULID, as newWebhookId makes them. */
export const WEBHOOK_ID = /^wh_[0-9A-HJKMNP-TV-Z]{26}$/;
/**
 * A webhook delivery: one event for one endpoint. Its id is the Standard Webhooks message id
 * (`webhook-id`), the same on every attempt, so a receiver can drop duplicates by it.
 */
export const newWebhookDeliveryId = (): string => `msg_${ulid()}`;
export const WEBHOOK_DELIVERY_ID = /^msg_[0-9A-HJKMNP-TV-Z]{26}$/;

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * The delivery id of an event that more than one telling may send (a job's end, a batch's): the
 * same for the same event, so that a second telling records nothing new. A ULID all the same: its
 * time is when the event happened (deliveries list newest first), its 80 random bits a hash of the
 * event's names (e.g. the job's id and the event type).
 */
export const eventDeliveryId = (at: number, ...names: readonly string[]): string => {
  const digest = createHash('sha256').update(names.join('\n')).digest();
  let random = '';
  for (let bit = 0; bit < 80; bit += 5) {
    const byte = bit >> 3;
    const word = ((digest[byte] as number) << 8) | (digest[byte + 1] as number);
    random += CROCKFORD[(word >> (11 - (bit & 7))) & 31];
  }
  return `msg_${encodeTime(Math.max(0, at), 10)}${random}`;
};
/** `bat_` and a ULID: a batch (POST /v1/batches). */
export const newBatchId = (): string => `bat_${ulid()}`;
/** `sk_` and a ULID: a signing key (POST /v1/signing-keys). */
export const newSigningKeyId = (): string => `sk_${ulid()}`;
export const SIGNING_KEY_ID = /^sk_[0-9A-HJKMNP-TV-Z]{26}$/;
/** A ULID: one upload of an asset (its bytes' key in the bucket, assets/<account>/<id>). */
export const newAssetUploadId = (): string => ulid();
/** `dst_` and a ULID: a destination (POST /v1/destinations, issue 36). */
export const newDestinationId = (): string => `dst_${ulid()}`;
export const DESTINATION_ID = /^dst_[0-9A-HJKMNP-TV-Z]{26}$/;
