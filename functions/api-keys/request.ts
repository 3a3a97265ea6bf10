/** POST /v1/api-keys on the wire. */
import { z } from 'zod';
import {
  type CreateApiKeyCommand,
  MAX_API_KEY_NAME_CHARACTERS,
} from '../domain/accounts/api-key-management.js';

const nameIssue = `must be a string of 1 to ${MAX_API_KEY_NAME_CHARACTERS} characters after trimming`;

export const createApiKeySchema = z.strictObject({
  name: z
    .string({ error: nameIssue })
    .trim()
    .min(1, { error: nameIssue })
    // Characters are code points: an emoji is one character, as a reader counts it.
    .refine((name) => [...name].length <= MAX_API_KEY_NAME_CHARACTERS, { error: nameIssue })
    .describe(`a label, 1-${MAX_API_KEY_NAME_CHARACTERS} characters after trimming (stored trimmed)`),
});

export type CreateApiKeyBody = z.output<typeof createApiKeySchema> & CreateApiKeyCommand;
