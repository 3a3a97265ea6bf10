/**
 * A render's `signature` (issue 34): a PAdES baseline B-B signature made with one of the
 * account's signing keys (domain/signing/signing-keys.ts), invisible or drawn in a box on a page.
 * As the caller gives it, and as the renderer is given it. The key is named here only: its
 * material (an uploaded private key opened, or a KMS key's ARN) joins the renderer's request when
 * it is called (render-call.ts), and is never part of a stored order or a saved template.
 */

/** Characters of `reason`, `location` and `contact` each. */
export const MAX_SIGNATURE_FIELD_CHARACTERS = 200;

/** A visible signature's box: points (1/72 in) from the page's top-left corner. */
export interface SignatureAppearance {
  /** 1-based; a page past the document's last fails the render (422 INVALID_PDF_OPTIONS). */
  readonly page: number;
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

export interface RequestedSignature {
  readonly key_id: string;
  readonly reason?: string | undefined;
  readonly location?: string | undefined;
  readonly contact?: string | undefined;
  /** Absent or null: an invisible signature. */
  readonly appearance?: SignatureAppearance | null | undefined;
}

export interface PdfSignature {
  readonly keyId: string;
  readonly reason: string | null;
  readonly location: string | null;
  readonly contact: string | null;
  readonly appearance: SignatureAppearance | null;
}

export const signatureOf = (given: RequestedSignature): PdfSignature => ({
  keyId: given.key_id,
  reason: given.reason ?? null,
  location: given.location ?? null,
  contact: given.contact ?? null,
  appearance: given.appearance ?? null,
});
