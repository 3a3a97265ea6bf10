/**
 * Signs the finished PDF (issue 34; domain/renders/signature.ts): PAdES baseline B-B (pades.ts)
 * with the key its caller opened for this render (RenderRequest.signingKey): an uploaded private
 * key signs in memory, a KMS key through kms:Sign (the signers in signers.ts). Neither the key nor
 * anything of it is logged: a failure says only that signing failed.
 */

import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SignaturePageError, signPades, type VisibleSignature } from '../pades.js';
import { signerOf } from '../signers.js';
import type { FinishingStep } from './step.js';

/** The face a visible signature's text is drawn in (the service's, beside FONTCONFIG_FILE). */
const FACE = 'NotoSans_400Regular.ttf';
const fonts = new Map<string, Uint8Array>();
const fontIn = (dir: string): Uint8Array => {
  let font = fonts.get(dir);
  if (!font) {
    font = new Uint8Array(readFileSync(join(dir, FACE)));
    fonts.set(dir, font);
  }
  return font;
};

const commonName = (certificatePem: string): string => {
  const subject = new X509Certificate(certificatePem).subject.split('\n');
  return (subject.find((l) => l.startsWith('CN=')) ?? subject[0] ?? '').replace(/^CN=/, '');
};

export const signature: FinishingStep<'signature'> = async (pdf, option, context) => {
  const material = context.request.signingKey;
  if (!material) {
    return {
      ok: false,
      code: 'PDF_RENDERING_FAILED',
      message: 'The PDF could not be signed: no signing key.',
    };
  }
  let appearance: VisibleSignature | undefined;
  if (option.appearance) {
    const { page, x, y, width, height } = option.appearance;
    if (!context.fontsDir) {
      return {
        ok: false,
        code: 'PDF_RENDERING_FAILED',
        message: 'The signature has no font to be drawn in.',
      };
    }
    appearance = {
      pageIndex: page - 1,
      box: { x, y, width, height },
      font: fontIn(context.fontsDir),
      lines: [
        `Digitally signed by ${commonName(material.certificatePem)}`,
        `Date: ${context.now.toISOString().replace('T', ' ').slice(0, 19)} UTC`,
        ...(option.reason ? [`Reason: ${option.reason}`] : []),
        ...(option.location ? [`Location: ${option.location}`] : []),
      ],
    };
  }
  try {
    const signed = await signPades(pdf, signerOf(material, context.kms), {
      ...(option.reason !== null ? { reason: option.reason } : {}),
      ...(option.location !== null ? { location: option.location } : {}),
      ...(option.contact !== null ? { contact: option.contact } : {}),
      signingTime: context.now,
      ...(appearance ? { appearance } : {}),
    });
    return { ok: true, pdf: signed };
  } catch (e) {
    if (e instanceof SignaturePageError) {
      return {
        ok: false,
        code: 'INVALID_PDF_OPTIONS',
        message: `signature.appearance.page is ${option.appearance?.page}, but the PDF has ${e.pages} page${e.pages === 1 ? '' : 's'}.`,
      };
    }
    // The error's name only: a message could quote key material.
    context.log.error('signing failed', { errorName: (e as Error).name });
    return { ok: false, code: 'PDF_RENDERING_FAILED', message: 'The PDF could not be signed.' };
  }
};
