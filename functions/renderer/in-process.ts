/**
 * The renderer called in-process, for the local stack and tests: the same render() as the
 * Lambda, one warm browser serving concurrent renders (each in its own browser context), and the
 * templating workers beside it (templating-pool.ts: templates never run on the main thread, which
 * here also serves the API).
 */
import type { RendererConfig } from '../core/config.js';
import { closeBrowser, configureRenderer, prewarm } from './browser.js';
import type { Renderer } from './contract.js';
import { render } from './render.js';
import { templatingPool } from './templating-pool.js';

/**
 * The browser and a templating worker start now, beside the rest of the stack's start. With
 * `config`, the renderer uses it instead of the process's environment.
 */
export const createInProcessRenderer = (config?: RendererConfig): Renderer => {
  if (config) configureRenderer(config);
  prewarm();
  templatingPool.prewarm();
  return { render };
};

/** Closes the browser, the egress proxy and the templating workers. A later render starts them again. */
export const closeRenderer = async (): Promise<void> => {
  await Promise.all([closeBrowser(), templatingPool.close()]);
};
