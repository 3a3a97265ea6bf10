import { monotonicFactory } from 'ulid';

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
/** `bat_` and a ULID: a batch (POST /v1/batches). */
export const newBatchId = (): string => `bat_${ulid()}`;
