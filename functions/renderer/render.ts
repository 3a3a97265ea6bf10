/**
 * One render: the template executed in a templating worker (templating-pool.ts) → its HTML in a
 * fresh, isolated page (session.ts) → PDF → PUT to the presigned URL. Templating and opening the
 * page overlap. Never throws; every outcome is a RenderResult whose message is safe to show the
 * caller.
 *
 * The deadline (page_load.timeout_ms) counts from the render's start and covers everything up to
 * the printed PDF, opening the page included (milliseconds; a single-process renderer's wait for
 * its turn too), so that a render answers within its timeout plus a small fixed margin whatever
 * its page, or another render's, does. Past it nothing is waited for: not the page, not its
 * requests (interception.ts stops answering them), not closing it (session.ts, in the background).
 */

import type { Logger } from '@aws-lambda-powertools/logger';
import { type CDPSession, type Page, TimeoutError } from 'puppeteer-core';
import { uploadPdf } from '../adapters/http/pdf-upload.js';
import { countWith, MetricUnit, metrics } from '../core/metrics.js';
import type { KmsSign } from '../domain/signing/signing-keys.js';
import { assetSource } from './asset-source.js';
import type { BrowserHost, RenderSession } from './browser.js';
import type {
  Diagnostics,
  RenderFailureCode,
  RenderRequest,
  RenderResult,
  TemplatePart,
  WaitUntil,
} from './contract.js';
import { type FinishingContext, finish } from './finishing/index.js';
import { RequestBudgetError } from './interception.js';
import { jobLogger } from './log.js';
import type { MemoryBudgetError, MemoryWatch } from './memory-watch.js';
import { padForNumbering, pageRangesOf } from './navigation/page-numbering.js';
import { chromiumPrintFlags, printNavigated } from './navigation/print.js';
import { watchNetwork } from './network-idle.js';
import { PageEventFloodError, PROTOCOL_EVENT_LIMIT } from './page-caps.js';
import { glyphCheckNeeded, type PageWatch } from './page-diagnostics.js';
import { ESTIMATE_MARGIN, estimatePages } from './page-estimate.js';
import { type RemovedLink, removeUnsafeLinks } from './pdf-links.js';
import { countPdfPages } from './pdf-pages.js';
import { ItemDocumentError, itemMark, proveItemDocument } from './run-item.js';
import type { RenderPart, TemplatingPool } from './templating-pool.js';

/** What a render runs on: its renderer's browser and templating pool, and how it prints. */
export interface RenderParts {
  readonly browser: BrowserHost;
  readonly templating: TemplatingPool;
  /** RendererConfig.taggedPdf. */
  readonly taggedPdf: boolean;
  /** The fonts' directory (FONTCONFIG_FILE's): what watermarks and stamps draw text in. */
  readonly fontsDir?: string | undefined;
  /** AWS KMS's signing, for a signature with a KMS key. */
  readonly kms?: KmsSign | undefined;
  /** The renderer's memory budget, watched while a page loads and prints (memory-watch.ts). */
  readonly memory?: MemoryWatch | undefined;
  /** Where the render's session comes from: a batch run's kept page (run.ts). @default browser */
  readonly sessions?: SessionSource | undefined;
}

/** Where a render takes its session from, and hands it back to. */
export type SessionSource = Pick<BrowserHost, 'takeSession' | 'releaseUnused' | 'prepareSpare'>;

const fail = (code: RenderFailureCode, message: string, diagnostics?: Diagnostics): RenderResult => ({
  ok: false,
  code,
  message,
  ...(diagnostics ? { diagnostics } : {}),
});

/**
 * How long the missing-glyph check may take (page-diagnostics.ts). It runs once the PDF is
 * printed, beside the upload, so that it delays no print. Measured (2 cores under a load of ~7):
 * 6-8 ms for the invoice, 13-15 ms for the 30-page report (its two non-ASCII characters found by
 * XPath among 12,000 text nodes), ~15 ms for a page of six scripts; the bound is for a huge
 * document of non-Latin text, where the check is given up rather than the answer delayed.
 */
const GLYPH_CHECK_MS = 500;

/**
 * Chromium refuses to print ("Printing failed") when a header or footer template has something to
 * load: a stylesheet link, an @import, a web font by URL. Nothing it asks for is fetched (its
 * images by URL are simply not drawn), so this is the one way a header fails, and it is the
 * template's doing: the page itself is fine.
 */
class HeaderFooterPrintError extends Error {
  constructor() {
    super('Chromium could not print the header or footer');
    this.name = 'HeaderFooterPrintError';
  }
}

const HEADER_FOOTER_PRINT_FAILED =
  'Chromium could not print the header or footer: header_html and footer_html cannot load anything (no stylesheet links, @import or web fonts by URL); use inline styles, and data: URLs for images and fonts.';

/** Chromium's headerTemplate and footerTemplate; an empty template would print its default (the date and title). */
const EMPTY_TEMPLATE = '<span></span>';

const MiB = 1024 * 1024;
const size = (bytes: number): string =>
  bytes >= MiB ? `${(bytes / MiB).toFixed(1).replace(/\.0$/, '')} MiB` : `${bytes} bytes`;

type Stage = 'open' | 'load' | 'selector' | 'print';

/** The requests a network-idle wait lets be in flight; the other waits are Chromium's own events. */
const MAX_INFLIGHT: Partial<Record<WaitUntil, number>> = { networkidle0: 0, networkidle2: 2 };

/** A wait that ran past the render's deadline. */
class StageTimeoutError extends Error {
  constructor(readonly stage: Stage) {
    super(`render stage ${stage} timed out`);
    this.name = 'StageTimeoutError';
  }
}

const noop = (): void => {};

/**
 * Waits for `promise` until `deadline` (performance.now() time). Puppeteer's own timeouts do
 * not cover everything: setContent's document.write never returns while a page script spins,
 * so the deadline is enforced here too. A promise left behind is kept from rejecting unhandled.
 */
const untilDeadline = async <T>(promise: Promise<T>, deadline: number, stage: Stage): Promise<T> => {
  promise.catch(noop);
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StageTimeoutError(stage)), Math.max(0, deadline - performance.now()));
  });
  try {
    return await Promise.race([promise, expired]);
  } catch (e) {
    throw e instanceof TimeoutError ? new StageTimeoutError(stage) : e;
  } finally {
    clearTimeout(timer);
  }
};

const quote = (selector: string): string =>
  JSON.stringify(selector.length > 100 ? `${selector.slice(0, 100)}…` : selector);

const timeoutMessage = (stage: Stage, request: RenderRequest): string => {
  const { waitUntil, timeoutMs, waitForSelector } = request.pageLoad;
  switch (stage) {
    case 'open':
      return `The renderer could not open a page within ${timeoutMs} ms.`;
    case 'load':
      return `The page did not reach "${waitUntil}" within ${timeoutMs} ms.`;
    case 'selector':
      return `The selector ${quote(waitForSelector ?? '')} did not appear within ${timeoutMs} ms.`;
    case 'print':
      return `Printing the PDF did not finish within ${timeoutMs} ms.`;
  }
};

/**
 * What went over, and what to do: the memory a document takes grows with what Chromium lays out
 * at once (a long continuous table costs ~7 times a table per page, docs/memory.md).
 */
const tooComplexMessage = (e: MemoryBudgetError): string =>
  `The document needs more memory than the renderer has (it went over its ${e.budgetMiB.toLocaleString('en-US')} MiB budget while loading or printing). Split long tables into shorter ones (a table per page or section instead of one continuous table), render fewer pages per document (a batch, then a merge), or render it async, where the renderer is larger.`;

/** Dialogs (alert, confirm, prompt, beforeunload) would block the page until answered. */
const dismissDialogs = (page: Page): void => {
  page.on('dialog', (dialog) => {
    dialog.dismiss().catch(noop);
  });
};

type Printed =
  | {
      readonly pdf: Uint8Array;
      readonly renderDurationMs: number;
      /** The links removed from Chromium's file (pdf-links.ts), for the diagnostics. */
      readonly removedLinks: readonly RemovedLink[];
    }
  | RenderResult;

/** The templated header and footer, when the render has them. */
interface HeaderFooter {
  readonly header: string | null;
  readonly footer: string | null;
}

/**
 * Rejects when the page's renderer process dies (crash, OOM kill). Puppeteer's waits do not
 * notice that by themselves: a waitForSelector would sit out its whole timeout on a dead page.
 */
const crashOf = (page: Page): Promise<never> => {
  const crashed = new Promise<never>((_, reject) => {
    page.once('error', (e) => reject(e));
  });
  crashed.catch(noop);
  return crashed;
};

/**
 * Has page.setContent write the document through the renderer's own DevTools session, not
 * puppeteer's evaluate, which tags its script with `//# sourceURL=pptr:…` naming the caller's file
 * (the renderer's install path and puppeteer's): every stack trace the page's scripts take while
 * the document is written (all its inline scripts') showed it, in the PDF and the diagnostics. This
 * script has no URL: its frame shows as `<anonymous>`. Puppeteer's lifecycle wait is kept.
 */
const writeWithoutSourceUrl = (page: Page, cdp: CDPSession, itemNonce: string | undefined): void => {
  const frame = page.mainFrame() as unknown as { setFrameContent?: (html: string) => Promise<void> };
  if (typeof frame.setFrameContent !== 'function') {
    throw new Error('puppeteer-core changed: Frame.setFrameContent is gone (see writeWithoutSourceUrl)');
  }
  // A batch run's item marks the document it writes with its own nonce (run-item.ts).
  const mark = itemMark(itemNonce);
  Object.defineProperty(frame, 'setFrameContent', {
    // Redefined for each render on a batch run's kept page (run.ts), with that render's session.
    configurable: true,
    value: async (html: string): Promise<void> => {
      const { exceptionDetails } = await cdp.send('Runtime.evaluate', {
        expression: `document.open(); document.write(${JSON.stringify(html)}); document.close();${mark}`,
      });
      if (exceptionDetails) throw new Error('writing the document failed');
    },
  });
};

const loadAndPrint = async (
  taggedPdf: boolean,
  session: RenderSession,
  html: string,
  headerFooter: HeaderFooter,
  request: RenderRequest,
  deadline: number,
): Promise<Printed> => {
  const { page, guard, cdp } = session;
  const { pdf: options, pageLoad, limits } = request;
  dismissDialogs(page);
  writeWithoutSourceUrl(page, cdp, session.itemNonce);
  // The page's renderer dying (killed for the memory budget too), or the page going over its
  // request budget, ends the wait at once.
  const failed = Promise.race([crashOf(page), guard.failed]);
  failed.catch(noop);

  const started = performance.now();
  const remaining = (): number => Math.max(1, Math.round(deadline - performance.now()));
  const until = <T>(promise: Promise<T>, at: number, stage: Stage): Promise<T> =>
    untilDeadline(Promise.race([promise, failed]), at, stage);

  // The network-idle waits are counted by the renderer (network-idle.ts), from before the write:
  // Chromium's own event does not come for a document written into a page that was already idle.
  const maxInflight = MAX_INFLIGHT[pageLoad.waitUntil];
  const network =
    maxInflight === undefined ? undefined : await until(watchNetwork(cdp, maxInflight), deadline, 'load');
  try {
    await until(
      page.setContent(html, {
        waitUntil: network ? 'domcontentloaded' : pageLoad.waitUntil,
        timeout: remaining(),
      }),
      deadline,
      'load',
    );
    if (network) await until(network.idle(), deadline, 'load');
  } finally {
    network?.stop();
  }
  if (pageLoad.waitForSelector !== null) {
    await until(
      page.waitForSelector(pageLoad.waitForSelector, { timeout: remaining() }),
      deadline,
      'selector',
    );
  }
  // A document certainly longer than the limit is refused before it is printed (page-estimate.ts).
  const estimated = await until(estimatePages(cdp, options), deadline, 'print');
  if (estimated !== undefined && estimated > limits.maxPages * ESTIMATE_MARGIN) {
    return fail(
      'PDF_TOO_MANY_PAGES',
      `The document is at least ${estimated} pages long (measured before printing), more than the limit of ${limits.maxPages}; split it into several documents (a batch, then a merge).`,
    );
  }
  const numbering = options.pageNumbering;
  if (numbering) await until(padForNumbering(page, numbering), deadline, 'print');
  const inches = (n: number): string => `${n}in`;
  const { header, footer } = headerFooter;
  const withHeaderFooter = header !== null || footer !== null;
  const taggedByDefault = taggedPdf;
  const printOnce = async (): Promise<Printed> => {
    const stream = await until(
      page
        .createPDFStream({
          format: options.format,
          landscape: options.landscape,
          printBackground: options.printBackground,
          margin: {
            top: inches(options.margins.top),
            right: inches(options.margins.right),
            bottom: inches(options.margins.bottom),
            left: inches(options.margins.left),
          },
          ...(withHeaderFooter
            ? {
                displayHeaderFooter: true,
                headerTemplate: header ?? EMPTY_TEMPLATE,
                footerTemplate: footer ?? EMPTY_TEMPLATE,
              }
            : {}),
          preferCSSPageSize: false,
          // One page past the limit at most: a longer document is refused once that page is
          // printed (storePdf), not after the whole of it (issue 37: 2,000 pages printed in 15.9 s
          // and 2.5 GB before they were refused).
          pageRanges: numbering ? pageRangesOf(numbering) : `1-${limits.maxPages + 1}`,
          ...chromiumPrintFlags(options, taggedByDefault),
          timeout: remaining(),
        })
        .catch((e: unknown) => {
          if (withHeaderFooter && e instanceof Error && /Printing failed/.test(e.message)) {
            throw new HeaderFooterPrintError();
          }
          throw e;
        }),
      deadline,
      'print',
    );

    // Read the PDF as Chromium streams it, and stop as soon as it is over the limit.
    const reader = stream.getReader();
    const chunks: Uint8Array[] = [];
    let total = 0;
    for (;;) {
      const { done, value } = await until(reader.read(), deadline, 'print');
      if (done) break;
      total += value.byteLength;
      if (total > limits.maxPdfBytes) {
        reader.cancel().catch(noop);
        return fail('PDF_TOO_LARGE', `The PDF is larger than the limit of ${size(limits.maxPdfBytes)}.`);
      }
      chunks.push(value);
    }
    const pdf = chunks.length === 1 && chunks[0] ? chunks[0] : Buffer.concat(chunks, total);
    // Links are made safe in Chromium's own file, before any incremental update (the outline's,
    // the metadata's: their /Prev is not walked), and in every print (a two-pass one too). A file
    // it cannot walk is not passed on unchecked.
    const removedLinks = removeUnsafeLinks(pdf);
    if (!removedLinks) {
      return fail('PDF_RENDERING_FAILED', 'The printed PDF could not be checked for unsafe links.');
    }
    return { pdf, renderDurationMs: Math.round(performance.now() - started), removedLinks };
  };
  await until(proveItemDocument(session, 'before'), deadline, 'print');
  const result = await printNavigated<Extract<Printed, { pdf: Uint8Array }>, RenderResult>(
    session.cdp,
    options,
    taggedByDefault,
    printOnce,
    (p) => until(p, deadline, 'print'),
  );
  await until(proveItemDocument(session, 'after'), deadline, 'print');
  return result;
};

/** `error`, not `message`: the logger keeps `message` for the event and drops a second one. */
const describeError = (e: unknown): Record<string, string> =>
  e instanceof Error ? { name: e.name, error: e.message } : { error: String(e) };

/** Counts the render's outcome and times in the metrics, and logs a failure with its code. */
const observe = (result: RenderResult, templatingMs: number | undefined, log: Logger): RenderResult => {
  countWith('Renders', { Outcome: result.ok ? 'completed' : 'failed' });
  if (templatingMs !== undefined)
    metrics.addMetric('TemplatingDuration', MetricUnit.Milliseconds, templatingMs);
  if (result.ok) {
    metrics.addMetric('RenderDuration', MetricUnit.Milliseconds, result.renderDurationMs);
    metrics.addMetric('PdfBytes', MetricUnit.Bytes, result.fileSizeBytes);
  } else {
    countWith('RenderFailures', { ErrorCode: result.code });
    log.info('render-failed', { code: result.code });
  }
  return result;
};

/** One render on `parts`; renderer.ts binds it to a renderer's own. */
export const render = async (parts: RenderParts, request: RenderRequest): Promise<RenderResult> => {
  const log = jobLogger(request.jobId);
  const started = performance.now();
  let templatingMs: number | undefined;
  const result = await renderJob(parts, request, log, (ms) => {
    templatingMs = ms;
  });
  log.debug('rendered', { ok: result.ok, durationMs: Math.round(performance.now() - started) });
  return observe(result, templatingMs, log);
};

/** The header and footer as templating parts: one job, one deadline, each bounded on its own. */
type Part = TemplatePart | (typeof MARK_PARTS)[number];

const templatingParts = (request: RenderRequest): { part: Part; render: RenderPart }[] => {
  const maxOutputBytes = request.limits.maxHeaderFooterBytes ?? request.limits.maxHtmlBytes;
  const parts: { part: Part; render: RenderPart }[] = [];
  for (const part of ['header', 'footer'] as const) {
    const source = request.template[part];
    if (typeof source === 'string') parts.push({ part, render: { name: part, source, maxOutputBytes } });
  }
  // A watermark's and a stamp's text: the same job, with the same variables (marks.ts).
  for (const mark of MARK_PARTS) {
    const source = request[mark]?.text;
    if (typeof source === 'string')
      parts.push({ part: mark, render: { name: mark, source, maxOutputBytes: MAX_MARK_TEXT_BYTES } });
  }
  return parts;
};

const MARK_PARTS = ['watermark', 'stamp'] as const;
/** A mark's text after templating: a line or two, never a document. */
const MAX_MARK_TEXT_BYTES = 4096;

const isTemplatePart = (name: string | undefined): name is TemplatePart =>
  name === 'header' || name === 'footer';

const renderJob = async (
  { browser: host, sessions, templating, taggedPdf, fontsDir, kms, memory }: RenderParts,
  request: RenderRequest,
  log: Logger,
  templated_: (ms: number) => void,
): Promise<RenderResult> => {
  const deadline = performance.now() + request.pageLoad.timeoutMs;
  const browser = sessions ?? host;
  const { source, variables } = request.template;
  const parts = templatingParts(request);
  const templatingStarted = performance.now();
  const templated = templating
    .render(source, variables, {
      maxOutputBytes: request.limits.maxHtmlBytes,
      ...(parts.length > 0 ? { parts: parts.map((p) => p.render) } : {}),
    })
    .finally(() => templated_(Math.round(performance.now() - templatingStarted)));
  const taking = browser.takeSession({ offline: request.offline === true });
  const opening = taking.then(
    (session) => ({ session }),
    (error: unknown) => ({ error }),
  );
  const template = await templated;
  if (!template.ok) {
    // Handed back when it opens, not awaited: the answer does not wait for the browser.
    taking.then(browser.releaseUnused, noop);
    browser.prepareSpare();
    const { code, message, details } = template;
    if (!details) return { ok: false, code, message };
    const { part, line, name } = details;
    // A mark's text is named in the message: the job's details name the document's parts only.
    if (part === 'watermark' || part === 'stamp')
      return { ok: false, code, message: `${part}.text: ${message}` };
    const where = {
      ...(line !== undefined ? { line } : {}),
      ...(name !== undefined ? { name } : {}),
      ...(isTemplatePart(part) ? { part } : {}),
    };
    return { ok: false, code, message, details: where };
  }
  const templatedPart = (part: Part): string | null => {
    const index = parts.findIndex((p) => p.part === part);
    return index < 0 ? null : (template.parts?.[index] ?? null);
  };
  const headerFooter = { header: templatedPart('header'), footer: templatedPart('footer') };
  const templatedMarks = Object.fromEntries(
    MARK_PARTS.flatMap((mark) => {
      const text = templatedPart(mark);
      return text === null ? [] : [[mark, text]];
    }),
  );

  let opened: Awaited<typeof opening>;
  try {
    opened = await untilDeadline(opening, deadline, 'open');
  } catch {
    // Past the deadline: whenever the session opens, it goes back unused.
    taking.then((s) => s.close(false), noop);
    return fail('PDF_RENDERING_TIMEOUT', timeoutMessage('open', request));
  }
  if ('error' in opened) {
    log.error('open-failed', describeError(opened.error));
    return fail('PDF_RENDERING_FAILED', 'The renderer could not open a page. Try again.');
  }
  const { session } = opened;
  const { watch } = session;
  if (request.assets) session.guard.serveAssets(assetSource(request.assets, log));

  let printed: Printed;
  // A page that timed out, crashed or went over its budget is stopped before it is closed.
  let spoiled = false;
  const watched = memory?.watch({
    browserPid: () => session.warm.pid,
    killBrowser: (reason) => session.warm.kill(reason),
  });
  try {
    printed = await loadAndPrint(taggedPdf, session, template.html, headerFooter, request, deadline);
  } catch (e) {
    spoiled = true;
    // A process killed for the renderer's memory budget while this render ran (memory-watch.ts):
    // its page crashed or its print failed for that.
    const overBudget = e instanceof StageTimeoutError ? undefined : watched?.overBudget();
    if (overBudget) {
      printed = fail('PDF_TOO_COMPLEX', tooComplexMessage(overBudget));
    } else if (e instanceof StageTimeoutError) {
      printed = fail('PDF_RENDERING_TIMEOUT', timeoutMessage(e.stage, request));
    } else if (e instanceof RequestBudgetError) {
      const limit = e.limit.toLocaleString('en-US');
      printed = fail(
        'PDF_RENDERING_FAILED',
        e.what === 'requests'
          ? `The page made more than ${limit} requests, the most one render may make.`
          : `The page opened more than ${limit} frames, the most one render may open.`,
      );
    } else if (e instanceof PageEventFloodError) {
      printed = fail(
        'PDF_RENDERING_FAILED',
        `The page sent more than ${PROTOCOL_EVENT_LIMIT.toLocaleString('en-US')} console messages or errors, the most one render may send.`,
      );
    } else if (e instanceof ItemDocumentError) {
      // Never expected: the run hands its page to one item at a time (run.ts). Not printed.
      log.error('item-document-lost', { when: e.when });
      printed = fail('PDF_RENDERING_FAILED', 'The renderer lost the page of this item. Try again.');
    } else if (e instanceof HeaderFooterPrintError) {
      spoiled = false;
      printed = fail('PDF_RENDERING_FAILED', HEADER_FOOTER_PRINT_FAILED);
    } else {
      // Chromium's messages carry protocol details and internal addresses: logged, not shown.
      log.error('chromium-failed', describeError(e));
      printed = fail('PDF_RENDERING_FAILED', 'Chromium failed while rendering the page.');
    }
  }
  watched?.end();
  if (!('ok' in printed)) reportRemovedLinks(printed.removedLinks, watch);
  // A printed page is looked at once more, for missing glyphs, while its PDF is checked and
  // uploaded (a failed one is not: nothing of it is printed).
  // Not when the page's text can only hold characters that every font of the renderer draws.
  const glyphs =
    'ok' in printed || !glyphCheckNeeded(template.html)
      ? Promise.resolve()
      : watch.checkGlyphs(Math.max(0, Math.min(GLYPH_CHECK_MS, deadline - performance.now())));
  const done = glyphs.then(() =>
    watch.finish({
      timedOut: 'ok' in printed && !printed.ok && printed.code === 'PDF_RENDERING_TIMEOUT',
    }),
  );
  // The page is done with once that check is: its requests are no longer answered, and it closes
  // in the background (never waited for).
  done
    .finally(() => {
      session.guard.end();
      session.close(spoiled).catch(noop);
      // The next render's session, when spares are on, opens meanwhile.
      browser.prepareSpare();
    })
    .catch(noop);
  if ('ok' in printed) return printed.ok ? printed : { ...printed, diagnostics: await done };

  const stored = await storePdf(printed, request, log, { fontsDir, kms, templated: templatedMarks });
  const diagnostics = await done;
  return { ...stored, diagnostics };
};

/** Each link removed from the PDF (pdf-links.ts), in the render's diagnostics. */
const reportRemovedLinks = (removed: readonly RemovedLink[], watch: PageWatch): void => {
  for (const { target, page } of removed) {
    watch.add(
      'unsafe_link',
      `removed from page ${page}: only http:, https:, mailto: and in-document links are kept`,
      target,
    );
  }
};

/** Page count checked, the finishing steps run (finishing/), size checked, and the PUT: the result without its diagnostics. */
const storePdf = async (
  { pdf: printed, renderDurationMs }: Extract<Printed, { pdf: Uint8Array }>,
  request: RenderRequest,
  log: Logger,
  finishing: Pick<FinishingContext, 'fontsDir' | 'templated' | 'kms'>,
): Promise<RenderResult> => {
  const pageCount = countPdfPages(printed);
  if (pageCount > request.limits.maxPages) {
    // Printed up to one page past the limit (loadAndPrint's pageRanges): the document has more.
    return fail(
      'PDF_TOO_MANY_PAGES',
      `The PDF has more than ${request.limits.maxPages} pages, the limit; split it into several documents (a batch, then a merge).`,
    );
  }
  const finished = await finish(printed, { request, log, now: new Date(), ...finishing });
  if (!finished.ok) return fail(finished.code, finished.message);
  const { pdf } = finished;
  if (pdf.byteLength > request.limits.maxPdfBytes) {
    return fail('PDF_TOO_LARGE', `The PDF is larger than the limit of ${size(request.limits.maxPdfBytes)}.`);
  }
  const stored = await uploadPdf(pdf, request.upload);
  if (stored) return stored;
  return { ok: true, fileSizeBytes: pdf.byteLength, pageCount, renderDurationMs };
};
