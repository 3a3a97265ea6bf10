/**
 * A render's `protection` (issue 34): AES-256 encryption (PDF 2.0, security handler revision 6)
 * with an owner password, an optional user password and the reader's permissions. The renderer
 * encrypts last, over every other finishing step (finishing.ts).
 *
 * Passwords are secrets: they are never logged, shown in a job or an error, or kept with a saved
 * template (a template's pdf_options has no `protection`). A sync render holds them only in the
 * request and in the renderer's invocation. An async render's stored order and a batch's (S3,
 * until the job ends) hold them sealed: AES-256-GCM under a key derived from the deployment's
 * API-key secret (as webhook signing secrets are), bound to the order's account and job (or
 * batch), so the bucket never holds one in clear and a sealed password copied to another order
 * does not open. order-secrets.ts seals them.
 */

/** The PDF 2.0 limit: a revision 6 password is at most 127 bytes of UTF-8. */
export const MAX_PASSWORD_BYTES = 127;
/** An owner password shorter, or of fewer distinct characters, is refused as weak (422). */
export const MIN_OWNER_PASSWORD_CHARACTERS = 12;
export const MIN_OWNER_PASSWORD_DISTINCT = 6;
export const PRINTING = ['high', 'low', 'none'] as const;
export type Printing = (typeof PRINTING)[number];

/** `protection` as the caller gives it. */
export interface RequestedProtection {
  readonly owner_password: string;
  readonly user_password?: string | undefined;
  readonly permissions?:
    | {
        readonly printing?: Printing | undefined;
        readonly copying?: boolean | undefined;
        readonly modifying?: boolean | undefined;
        readonly annotating?: boolean | undefined;
        readonly filling_forms?: boolean | undefined;
        readonly assembling?: boolean | undefined;
      }
    | undefined;
}

/** `protection` as the renderer is given it: every permission decided. */
export interface PdfProtection {
  readonly ownerPassword: string;
  /** null: the document opens without a password. */
  readonly userPassword: string | null;
  readonly permissions: {
    readonly printing: Printing;
    readonly copying: boolean;
    readonly modifying: boolean;
    readonly annotating: boolean;
    readonly fillingForms: boolean;
    readonly assembling: boolean;
  };
}

/** Defaults: printing allowed at full quality, everything else refused. */
export const protectionOf = (given: RequestedProtection): PdfProtection => {
  const p = given.permissions ?? {};
  return {
    ownerPassword: given.owner_password,
    userPassword: given.user_password ?? null,
    permissions: {
      printing: p.printing ?? 'high',
      copying: p.copying ?? false,
      modifying: p.modifying ?? false,
      annotating: p.annotating ?? false,
      fillingForms: p.filling_forms ?? false,
      assembling: p.assembling ?? false,
    },
  };
};
