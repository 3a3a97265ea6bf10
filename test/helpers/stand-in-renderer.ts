/**
 * A renderer that stores a stand-in file through the presigned PUT, as the real one does, without
 * starting Chromium: for tests about jobs and storage rather than printing.
 */
import type { Renderer } from '../../functions/domain/ports.js';

export const STAND_IN_PDF = '%PDF-1.7 stand-in';

export const standInRenderer: Renderer = {
  async render(request) {
    const body = new TextEncoder().encode(STAND_IN_PDF);
    const put = await fetch(request.upload.url, { method: 'PUT', headers: request.upload.headers, body });
    if (!put.ok) throw new Error(`upload answered ${put.status}`);
    return { ok: true, fileSizeBytes: body.length, pageCount: 1, renderDurationMs: 1 };
  },
};
