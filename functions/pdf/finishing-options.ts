/**
 * The wire schemas of the finishing options this file owns (issue 34): `protection` (AES-256
 * passwords and permissions). Zod only, like options.ts: the route declarations import it.
 * The domain's checks that a schema cannot make (two options together) are in
 * functions/domain/renders/finishing.ts.
 */
import { z } from 'zod';
import {
  MAX_PASSWORD_BYTES,
  MIN_OWNER_PASSWORD_CHARACTERS,
  MIN_OWNER_PASSWORD_DISTINCT,
  PRINTING,
} from '../domain/renders/protection.js';

const passwordIssue = (least: number) =>
  `must be ${least} to ${MAX_PASSWORD_BYTES} bytes of UTF-8 without control characters`;

const password = (least: number) =>
  z
    .string({ error: passwordIssue(least) })
    .refine((p) => [...p].length >= least && Buffer.byteLength(p, 'utf8') <= MAX_PASSWORD_BYTES, {
      error: passwordIssue(least),
    })
    .refine((p) => !/[\p{Cc}\p{Cs}]/u.test(p), { error: passwordIssue(least) });

const ownerPassword = password(MIN_OWNER_PASSWORD_CHARACTERS).refine(
  (p) => new Set(p).size >= MIN_OWNER_PASSWORD_DISTINCT,
  { error: `is too weak: use at least ${MIN_OWNER_PASSWORD_DISTINCT} different characters` },
);

const permission = (what: string) =>
  z.boolean({ error: 'must be true or false' }).optional().describe(`${what}. Default: false`);

export const protectionSchema = z
  .strictObject(
    {
      owner_password: ownerPassword.describe(
        `the password that lifts every restriction: ${MIN_OWNER_PASSWORD_CHARACTERS} to ${MAX_PASSWORD_BYTES} bytes of UTF-8, at least ${MIN_OWNER_PASSWORD_DISTINCT} different characters; never stored, logged or shown`,
      ),
      user_password: password(1)
        .optional()
        .describe(
          'the password that opens the document (with the permissions below); absent: it opens without one, and readers still enforce the permissions',
        ),
      permissions: z
        .strictObject(
          {
            printing: z
              .enum(PRINTING, { error: `must be one of ${PRINTING.join(', ')}` })
              .optional()
              .describe('high: print at full quality; low: degraded only; none: not at all. Default: high'),
            copying: permission('copy or extract text and images'),
            modifying: permission('change the content'),
            annotating: permission('add or change comments'),
            filling_forms: permission('fill in form fields'),
            assembling: permission('insert, rotate or delete pages'),
          },
          {
            error:
              'must be an object {printing?, copying?, modifying?, annotating?, filling_forms?, assembling?}',
          },
        )
        .optional(),
    },
    { error: 'must be an object {owner_password, user_password?, permissions?}' },
  )
  .refine((p) => p.user_password === undefined || p.user_password !== p.owner_password, {
    error: 'user_password must differ from owner_password (else the owner password opens nothing more)',
    path: ['user_password'],
  })
  .describe(
    'encrypt the PDF (AES-256, PDF 2.0 security handler revision 6), after every other step. Not kept with a saved template; sealed (AES-256-GCM) in an async render’s stored order',
  );
