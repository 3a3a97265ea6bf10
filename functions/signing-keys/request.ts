/** POST /v1/signing-keys on the wire: one of three forms, each checked here for shape only. */
import { z } from 'zod';
import type { SigningKeyUpload } from '../domain/signing/signing-keys.js';

/** Characters of a PEM field (a key and a chain of a few certificates fit in 64 KiB). */
export const MAX_PEM_CHARACTERS = 65_536;
/** Characters of a PKCS#12's base64 (48 KiB of DER). */
export const MAX_PKCS12_BASE64_CHARACTERS = 65_536;
const MAX_NAME_CHARACTERS = 100;
const MAX_PASSPHRASE_CHARACTERS = 1_024;
/** An ARN of a KMS key: arn:<partition>:kms:<region>:<account>:key/<id> (not an alias). */
const KMS_KEY_ARN = /^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key\/[A-Za-z0-9-]{1,128}$/;

const pem = (what: string) =>
  z
    .string({ error: `must be a string of at most ${MAX_PEM_CHARACTERS} characters` })
    .max(MAX_PEM_CHARACTERS, { error: `must be a string of at most ${MAX_PEM_CHARACTERS} characters` })
    .optional()
    .describe(what);

const FORMS =
  'give private_key_pem with certificate_pem, pkcs12_base64 with passphrase, or kms_key_arn with certificate_pem';

export const createSigningKeySchema = z
  .strictObject({
    name: z
      .string({ error: `must be a string of 1-${MAX_NAME_CHARACTERS} characters` })
      .trim()
      .min(1, { error: `must be a string of 1-${MAX_NAME_CHARACTERS} characters` })
      .max(MAX_NAME_CHARACTERS, { error: `must be a string of 1-${MAX_NAME_CHARACTERS} characters` })
      .describe('a label'),
    certificate_pem: pem("the signer's X.509 certificate, then its issuers (PEM)"),
    private_key_pem: pem('the private key (PEM, unencrypted): stored sealed, shown never again'),
    pkcs12_base64: z
      .string({ error: 'must be base64 of a PKCS#12 file' })
      .max(MAX_PKCS12_BASE64_CHARACTERS, {
        error: `must be at most ${MAX_PKCS12_BASE64_CHARACTERS} characters of base64`,
      })
      .regex(/^[A-Za-z0-9+/=\s]+$/, { error: 'must be base64 of a PKCS#12 file' })
      .optional()
      .describe('a PKCS#12 (.p12, .pfx) with one private key and its chain, AES-256 (OpenSSL 3 default)'),
    passphrase: z
      .string({ error: `must be a string of at most ${MAX_PASSPHRASE_CHARACTERS} characters` })
      .max(MAX_PASSPHRASE_CHARACTERS, { error: `must be at most ${MAX_PASSPHRASE_CHARACTERS} characters` })
      .optional()
      .describe("the PKCS#12's passphrase: used once, never stored"),
    kms_key_arn: z
      .string({ error: 'must be the ARN of a KMS key (arn:aws:kms:<region>:<account>:key/<id>)' })
      .regex(KMS_KEY_ARN, { error: 'must be the ARN of a KMS key (arn:aws:kms:<region>:<account>:key/<id>)' })
      .optional()
      .describe(
        'an asymmetric KMS key (RSA or ECC_NIST_P256, SIGN_VERIFY) of the deployment, tagged pdf-service:signing=true: the private key never leaves KMS',
      ),
  })
  .superRefine((body, ctx) => {
    const pemForm = body.private_key_pem !== undefined;
    const p12Form = body.pkcs12_base64 !== undefined;
    const kmsForm = body.kms_key_arn !== undefined;
    const forms = [pemForm, p12Form, kmsForm].filter(Boolean).length;
    const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    if (forms !== 1) {
      issue(pemForm || forms === 0 ? 'private_key_pem' : 'pkcs12_base64', FORMS);
      return;
    }
    if ((pemForm || kmsForm) && body.certificate_pem === undefined) issue('certificate_pem', FORMS);
    if (p12Form && body.passphrase === undefined) issue('passphrase', FORMS);
    if (p12Form && body.certificate_pem !== undefined) issue('certificate_pem', FORMS);
    if (!p12Form && body.passphrase !== undefined) issue('passphrase', FORMS);
  });

export type CreateSigningKeyBody = z.output<typeof createSigningKeySchema>;

/** The body as the domain takes it (the schema has checked that exactly one form is given). */
export const uploadOf = (body: CreateSigningKeyBody): SigningKeyUpload => {
  if (body.kms_key_arn !== undefined) {
    return { kind: 'kms', kmsKeyArn: body.kms_key_arn, certificatePem: body.certificate_pem ?? '' };
  }
  if (body.pkcs12_base64 !== undefined) {
    return {
      kind: 'pkcs12',
      pkcs12: new Uint8Array(Buffer.from(body.pkcs12_base64, 'base64')),
      passphrase: body.passphrase ?? '',
    };
  }
  return {
    kind: 'pem',
    privateKeyPem: body.private_key_pem ?? '',
    certificatePem: body.certificate_pem ?? '',
  };
};
