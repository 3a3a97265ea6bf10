/**
 * A Renderer (domain/ports.ts) without Chromium: it executes the template with the service's own
 * templating engine, as the renderer's templating workers do, prints the HTML's text to a small
 * valid PDF (pdf-document.ts), checks the page and size limits and uploads the PDF through the
 * presigned PUT with exactly its headers, as functions/renderer/render.ts does. A failed render is
 * a result, never a rejection. For tests about jobs, storage and queues rather than printing; the
 * renderer contract (test/contract/renderer.contract.ts) holds it and the Chromium renderer to the
 * same cases.
 */
import type { Renderer, RenderFailureCode, RenderResult, TemplatePart } from '../../domain/common/ports.js';
import { parseTemplateData, renderTemplate, TemplateError } from '../../templating/index.js';
import { uploadPdf } from '../http/pdf-upload.js';
import { pdfDocument } from './pdf-document.js';

export interface MemoryRendererOptions {
  /** When the render's PDF says it was made. @default the time of the render */
  readonly now?: () => Date;
}

const fail = (code: RenderFailureCode, message: string): RenderResult => ({ ok: false, code, message });

const MiB = 1024 * 1024;
const size = (bytes: number): string =>
  bytes >= MiB ? `${(bytes / MiB).toFixed(1).replace(/\.0$/, '')} MiB` : `${bytes} bytes`;

/** The templating pool's outcome for an engine error (functions/renderer/templating-pool.ts). */
const templateFailure = (e: TemplateError, maxOutputBytes: number, part?: TemplatePart): RenderResult => {
  if (e.kind === 'limit' && e.outputTooLarge) {
    return part
      ? {
          ok: false,
          code: 'HTML_CONTENT_TOO_LARGE',
          message: `The ${part}'s HTML is over ${maxOutputBytes} bytes after templating`,
          details: { part },
        }
      : fail('HTML_CONTENT_TOO_LARGE', `The HTML is over ${maxOutputBytes} bytes after templating`);
  }
  const details = {
    ...(e.line !== undefined ? { line: e.line } : {}),
    ...(e.variable !== undefined ? { name: e.variable } : {}),
    ...(part ? { part } : {}),
  };
  return {
    ok: false,
    code: 'INVALID_HTML_TEMPLATE',
    message: e.message,
    ...(Object.keys(details).length > 0 ? { details } : {}),
  };
};

export const createMemoryRenderer = (options: MemoryRendererOptions = {}): Renderer => ({
  async render(request) {
    const started = performance.now();
    const { source, variables, header, footer } = request.template;
    const maxPartBytes = request.limits.maxHeaderFooterBytes ?? request.limits.maxHtmlBytes;
    let html: string;
    const parts: string[] = [];
    let part: TemplatePart | undefined;
    try {
      const data = typeof variables === 'string' ? parseTemplateData(variables) : variables;
      html = renderTemplate(source, data, { maxOutputBytes: request.limits.maxHtmlBytes });
      for (const [name, partSource] of [
        ['header', header],
        ['footer', footer],
      ] as const) {
        if (typeof partSource !== 'string') continue;
        part = name;
        parts.push(renderTemplate(partSource, data, { maxOutputBytes: maxPartBytes }));
      }
    } catch (e) {
      if (e instanceof TemplateError) {
        return templateFailure(e, part ? maxPartBytes : request.limits.maxHtmlBytes, part);
      }
      return fail('PDF_RENDERING_FAILED', 'Templating failed in the renderer.');
    }
    const pdf = pdfDocument(parts.length > 0 ? `${parts.join('\n')}\n${html}` : html, {
      format: request.pdf.format,
      landscape: request.pdf.landscape,
      createdAt: options.now?.() ?? new Date(),
      ...(request.metadata ? { metadata: request.metadata } : {}),
    });
    const pageCount = countPages(pdf);
    if (pageCount > request.limits.maxPages) {
      return fail(
        'PDF_TOO_MANY_PAGES',
        `The PDF has more than ${request.limits.maxPages} pages, the limit; split it into several documents (a batch, then a merge).`,
      );
    }
    if (pdf.byteLength > request.limits.maxPdfBytes) {
      return fail(
        'PDF_TOO_LARGE',
        `The PDF is larger than the limit of ${size(request.limits.maxPdfBytes)}.`,
      );
    }
    const renderDurationMs = Math.round(performance.now() - started);
    const stored = await uploadPdf(pdf, request.upload);
    if (stored) return stored;
    return { ok: true, fileSizeBytes: pdf.byteLength, pageCount, renderDurationMs };
  },
});

/** The page tree's count (pdf-document.ts writes one /Count). */
const countPages = (pdf: Uint8Array): number => {
  const match = /\/Type \/Pages [^>]*\/Count (\d+)/.exec(Buffer.from(pdf).toString('latin1'));
  return match ? Number(match[1]) : 0;
};
