/**
 * The wire schemas of the finishing options this file owns (issue 34): `protection` (AES-256
 * passwords and permissions), `watermark` and `stamp` (text or an image on chosen pages). Zod only, like options.ts: the route declarations import it.
 * The domain's checks that a schema cannot make (two options together) are in
 * functions/domain/renders/finishing.ts.
 */
import { z } from 'zod';
import {
  MARK_DEFAULTS,
  MARK_IMAGE_TYPES,
  MARK_POSITIONS,
  MAX_MARK_IMAGE_URI_BYTES,
  MAX_MARK_TEXT_CHARACTERS,
  MAX_PAGES_SPEC_CHARACTERS,
  parsePages,
} from '../domain/renders/marks.js';
import {
  MAX_PASSWORD_BYTES,
  MIN_OWNER_PASSWORD_CHARACTERS,
  MIN_OWNER_PASSWORD_DISTINCT,
  PRINTING,
} from '../domain/renders/protection.js';
import { MAX_SIGNATURE_FIELD_CHARACTERS } from '../domain/renders/signature.js';

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

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const JPEG = Buffer.from([0xff, 0xd8, 0xff]);

/** A data: URI whose bytes are the PNG or JPEG its media type says (checked by signature). */
const isImageDataUri = (uri: string): boolean => {
  const m = /^data:(image\/png|image\/jpeg);base64,([A-Za-z0-9+/]+={0,2})$/.exec(uri);
  if (!m) return false;
  const bytes = Buffer.from(m[2] as string, 'base64');
  const signature = m[1] === 'image/png' ? PNG : JPEG;
  return bytes.length > signature.length && bytes.subarray(0, signature.length).equals(signature);
};

const imageIssue = `must be a data: URI (base64) of a ${MARK_IMAGE_TYPES.join(' or ')} image, at most ${MAX_MARK_IMAGE_URI_BYTES} bytes`;
const pagesIssue =
  'must be pages and ranges such as "1-3,5,last" (1-based, ranges ascending, "last" the last page)';
const number = (issue: string, min: number, max: number) =>
  z.number({ error: issue }).min(min, { error: issue }).max(max, { error: issue }).optional();

/** `watermark` (under the content) or `stamp` (over it): one shape, its own defaults. */
export const markSchema = (kind: keyof typeof MARK_DEFAULTS) => {
  const defaults = MARK_DEFAULTS[kind];
  return z
    .strictObject(
      {
        text: z
          .string({ error: `must be a string of 1 to ${MAX_MARK_TEXT_CHARACTERS} characters` })
          .refine((t) => t.trim() !== '' && [...t].length <= MAX_MARK_TEXT_CHARACTERS, {
            error: `must be a string of 1 to ${MAX_MARK_TEXT_CHARACTERS} characters`,
          })
          .refine((t) => !/[\p{Cc}\p{Cs}]/u.test(t), { error: 'must not contain control characters' })
          .optional()
          .describe(
            'plain text, a Jinja2 template with the render\'s variables ("PAID {{ paid_on }}"); drawn as real, searchable text in the service\'s fonts',
          ),
        image: z
          .string({ error: imageIssue })
          .max(MAX_MARK_IMAGE_URI_BYTES, { error: imageIssue })
          .refine(isImageDataUri, { error: imageIssue })
          .optional()
          .describe('a PNG or JPEG as a data: URI, drawn at 72 dpi (shrunk to fit the page)'),
        font_size: number('must be a number of points from 4 to 400', 4, 400).describe(
          `points. Default: ${defaults.fontSize}`,
        ),
        color: z
          .string({ error: 'must be a colour #rrggbb' })
          .regex(/^#[0-9a-fA-F]{6}$/, { error: 'must be a colour #rrggbb' })
          .optional()
          .describe(`the text's colour. Default: ${defaults.color}`),
        opacity: number('must be a number from 0 to 1', 0, 1).describe(`Default: ${defaults.opacity}`),
        rotation_deg: number('must be a number of degrees from -360 to 360', -360, 360).describe(
          `counter-clockwise. Default: ${defaults.rotationDeg}`,
        ),
        position: z
          .enum(MARK_POSITIONS, { error: `must be one of ${MARK_POSITIONS.join(', ')}` })
          .optional()
          .describe('where on the page (half an inch from the edges). Default: center'),
        pages: z
          .string({ error: pagesIssue })
          .max(MAX_PAGES_SPEC_CHARACTERS, { error: pagesIssue })
          .refine((spec) => parsePages(spec) !== undefined, { error: pagesIssue })
          .optional()
          .describe(
            'the pages it goes on, such as "1-3,last"; a page past the document\'s last fails the render (422 INVALID_PDF_OPTIONS). Default: every page',
          ),
      },
      {
        error:
          'must be an object {text or image, font_size?, color?, opacity?, rotation_deg?, position?, pages?}',
      },
    )
    .refine((m) => (m.text === undefined) !== (m.image === undefined), {
      error: 'give exactly one of text and image',
      path: ['text'],
    })
    .describe(
      kind === 'watermark'
        ? 'text or an image drawn under the page content, on the pages asked'
        : 'text or an image drawn over the page content, on the pages asked',
    );
};

const signatureText = (what: string) =>
  z
    .string({ error: `must be a string of at most ${MAX_SIGNATURE_FIELD_CHARACTERS} characters` })
    .refine((t) => [...t].length <= MAX_SIGNATURE_FIELD_CHARACTERS, {
      error: `must be a string of at most ${MAX_SIGNATURE_FIELD_CHARACTERS} characters`,
    })
    .refine((t) => !/[\p{Cc}\p{Cs}]/u.test(t), { error: 'must not contain control characters' })
    .optional()
    .describe(what);

const points = (issue: string, min: number) =>
  z.number({ error: issue }).min(min, { error: issue }).max(14_400, { error: issue });

/** `signature` (issue 34): a PAdES B-B signature with one of the account's signing keys. */
export const signatureSchema = z
  .strictObject(
    {
      key_id: z
        .string({ error: 'must be a signing key id (sk_…)' })
        .max(100, { error: 'must be a signing key id (sk_…)' })
        .describe(
          "one of the account's signing keys (POST /v1/signing-keys); another's or an unknown one: 422 INVALID_SIGNING_KEY naming signature.key_id",
        ),
      reason: signatureText('why it is signed (the signature dictionary’s /Reason)'),
      location: signatureText('where it is signed (/Location)'),
      contact: signatureText('how to reach the signer (/ContactInfo)'),
      appearance: z
        .strictObject(
          {
            page: z
              .number({ error: 'must be an integer page number of 1 or more' })
              .int({ error: 'must be an integer page number of 1 or more' })
              .min(1, { error: 'must be an integer page number of 1 or more' })
              .max(100_000, { error: 'must be an integer page number of 1 or more' })
              .describe('1-based; past the last page the render fails (422 INVALID_PDF_OPTIONS)'),
            x: points('must be a number of points from 0 to 14400', 0).describe(
              "points from the page's left edge",
            ),
            y: points('must be a number of points from 0 to 14400', 0).describe(
              "points from the page's top edge",
            ),
            width: points('must be a number of points from 20 to 14400', 20),
            height: points('must be a number of points from 10 to 14400', 10),
          },
          { error: 'must be an object {page, x, y, width, height} in points, or null' },
        )
        .nullable()
        .optional()
        .describe(
          'a visible signature: a box on a page that shows who signed, when, and the reason and location; absent or null: an invisible signature',
        ),
    },
    { error: 'must be an object {key_id, reason?, location?, contact?, appearance?}' },
  )
  .describe(
    'sign the PDF (PAdES baseline B-B, SHA-256) with one of your signing keys, after the marks and the document information; not with protection (encrypting would break the signature). The private key is never in the render order: it joins the renderer’s call only',
  );
