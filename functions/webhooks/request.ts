/** POST /v1/webhooks on the wire. */
import { z } from 'zod';
import {
  type CreateWebhookCommand,
  MAX_WEBHOOK_DESCRIPTION_CHARACTERS,
  MAX_WEBHOOK_URL_CHARACTERS,
} from '../domain/webhooks/webhook-management.js';
import { WEBHOOK_EVENT_TYPES } from '../domain/webhooks/webhooks.js';

const urlIssue = `must be an absolute https (or http) URL of at most ${MAX_WEBHOOK_URL_CHARACTERS} characters`;
const descriptionIssue = `must be a string of at most ${MAX_WEBHOOK_DESCRIPTION_CHARACTERS} characters`;
const eventsIssue = `must be a non-empty array of distinct events among ${WEBHOOK_EVENT_TYPES.join(', ')}`;

const isHttpUrl = (value: string): boolean => {
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.hostname !== '';
  } catch {
    return false;
  }
};

export const createWebhookSchema = z.strictObject({
  url: z
    .string({ error: urlIssue })
    .max(MAX_WEBHOOK_URL_CHARACTERS, { error: urlIssue })
    .refine(isHttpUrl, { error: urlIssue })
    .describe(
      'where events are POSTed; its host must resolve to public addresses only (checked now and at every delivery)',
    ),
  description: z
    .string({ error: descriptionIssue })
    .trim()
    .refine((d) => [...d].length <= MAX_WEBHOOK_DESCRIPTION_CHARACTERS, { error: descriptionIssue })
    .nullable()
    .default(null)
    .describe(`a label, at most ${MAX_WEBHOOK_DESCRIPTION_CHARACTERS} characters`),
  events: z
    .array(z.enum(WEBHOOK_EVENT_TYPES, { error: eventsIssue }), { error: eventsIssue })
    .min(1, { error: eventsIssue })
    .refine((events) => new Set(events).size === events.length, { error: eventsIssue })
    .nullable()
    .default(null)
    .describe(
      'the events to send (default: all of them); webhook.test is sent on request whatever this says',
    ),
});

export type CreateWebhookBody = z.output<typeof createWebhookSchema> & CreateWebhookCommand;
