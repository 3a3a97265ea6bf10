/**
 * A rendered PDF PUT to its presigned URL: what every renderer does last (the Chromium renderer,
 * functions/renderer/render.ts, and the memory renderer, adapters/memory/renderer.ts). A refused or
 * unreachable PUT is a failed render (PDF_STORAGE_FAILED), never an exception.
 */
import type { RenderRequest, RenderResult } from '../../domain/common/ports.js';

/** The PUT is not part of the render budget; S3 takes a 50 MiB body well within this. */
const UPLOAD_TIMEOUT_MS = 60_000;

const storageFailed = (message: string): RenderResult => ({ ok: false, code: 'PDF_STORAGE_FAILED', message });

/** Undefined once stored; else the failed render to answer. */
export const uploadPdf = async (
  pdf: Uint8Array,
  target: RenderRequest['upload'],
): Promise<RenderResult | undefined> => {
  let status: number;
  try {
    const response = await fetch(target.url, {
      method: 'PUT',
      headers: { ...target.headers },
      // Chromium's stream never hands out shared memory; the DOM typing of fetch asks to be told.
      body: pdf as Uint8Array<ArrayBuffer>,
      signal: AbortSignal.timeout(UPLOAD_TIMEOUT_MS),
    });
    status = response.status;
    await response.body?.cancel();
  } catch {
    return storageFailed('Storing the PDF failed: the storage service could not be reached.');
  }
  if (status < 200 || status > 299) {
    return storageFailed(`Storing the PDF failed: the storage service answered HTTP ${status}.`);
  }
  return undefined;
};
