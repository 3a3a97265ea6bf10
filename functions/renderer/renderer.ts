/**
 * A renderer you can instantiate: createRenderer(config) owns its browser, its sessions, its
 * egress proxy and policy (browser.ts) and its templating workers (templating-pool.ts). Nothing
 * is kept at module scope, so several renderers (one per local stack, one per test) live side by
 * side in one process. The Lambda handler makes one at cold start and keeps it at its module
 * scope, where it survives warm invocations (handler.ts); the local stack makes one per stack.
 */
import { dirname } from 'node:path';
import { awsKmsSign } from '../adapters/kms/kms-signer.js';
import type { RendererConfig } from '../core/config.js';
import type { KmsSign } from '../domain/signing/signing-keys.js';
import { type Admission, createAdmission } from './admission.js';
import { type BrowserHost, createBrowserHost } from './browser.js';
import type { Renderer, RenderRequest, RenderResult } from './contract.js';
import { createFetchedFonts } from './fetched-fonts.js';
import { createMemoryWatch, type MemoryWatch } from './memory-watch.js';
import { render } from './render.js';
import { type ContextRecord, renderRun } from './run.js';
import { createTemplatingPool, type TemplatingPool, type TemplatingPoolOptions } from './templating-pool.js';

export interface RendererOptions {
  /**
   * Open the next render's context and page ahead of it (browser.ts, spare session).
   * @default 0: each render opens its own, at render time (tests find and fault those)
   */
  readonly spareSessions?: 0 | 1;
  /** @default the pool's defaults (templating-pool.ts) */
  readonly templating?: TemplatingPoolOptions;
  /** Renders that may wait for a turn beyond those running. @default config.maxConcurrentRenders */
  readonly maxQueuedRenders?: number;
  /** Tests: AWS KMS's signing (a memory stand-in, adapters/memory/kms.ts). @default the KMS client */
  readonly kms?: KmsSign;
}

export interface RendererInstance extends Renderer {
  readonly config: RendererConfig;
  /** Its browser: tests inspect it and inject faults through it. */
  readonly browser: BrowserHost;
  readonly templating: TemplatingPool;
  /** Renders running and waiting for a turn (admission.ts). */
  readonly admission: Admission;
  /** Its memory budget and what it has used (memory-watch.ts). */
  readonly memory: MemoryWatch;
  /** The contexts batch runs' items rendered in, newest last (run.ts): tests check isolation by it. */
  readonly runContexts: readonly ContextRecord[];
  renderRun: NonNullable<Renderer['renderRun']>;
  /** Starts the browser and a templating worker ahead of the first render. */
  prewarm(): void;
  /** Closes the browser, the egress proxy and the templating workers. A later render starts them again. */
  close(): Promise<void>;
}

export const createRenderer = (config: RendererConfig, options: RendererOptions = {}): RendererInstance => {
  // The fonts the layer leaves out, fetched on a page's first need: each Chromium launch reads them
  // through a fontconfig file that adds the landed families' directories to the layer's
  // (fetched-fonts.ts).
  const fetchedFonts = config.fetchedFonts
    ? createFetchedFonts(config.fetchedFonts, config.fontconfigFile)
    : undefined;
  const browser = createBrowserHost(config, {
    spareSessions: options.spareSessions ?? 0,
    fetchedFonts,
  });
  const templating = createTemplatingPool(options.templating);
  const parts = {
    browser,
    templating,
    taggedPdf: config.taggedPdf,
    // The fonts Chromium prints with lie beside its fontconfig file (lib/layer-fonts.ts).
    fontsDir: config.fontconfigFile === undefined ? undefined : dirname(config.fontconfigFile),
    // The process's KMS port (its client made on its first signature); a stand-in where one is handed in.
    kms: options.kms ?? awsKmsSign,
    memory: createMemoryWatch(config.memoryBudget),
    fetchedFonts,
  };
  const admission = createAdmission({
    maxConcurrent: config.maxConcurrentRenders,
    maxQueued: options.maxQueuedRenders ?? config.maxConcurrentRenders,
  });
  const runContexts: ContextRecord[] = [];
  return {
    config,
    browser,
    templating,
    admission,
    memory: parts.memory,
    runContexts,
    renderRun: (run) => renderRun(parts, run, admission, config.maxPageRequests, runContexts),
    render: async (request: RenderRequest): Promise<RenderResult> => {
      const outcome = await admission.run(() => render(parts, request));
      if (outcome.admitted) return outcome.value;
      return {
        ok: false,
        code: 'SERVICE_BUSY',
        message: `The renderer is busy with other renders; try again in ${outcome.retryAfterSeconds} s.`,
        retryAfterSeconds: outcome.retryAfterSeconds,
      };
    },
    prewarm: () => {
      browser.prewarm();
      templating.prewarm();
    },
    close: async () => {
      await Promise.all([browser.close(), templating.close(), fetchedFonts?.close()]);
    },
  };
};
