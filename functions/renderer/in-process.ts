/**
 * The renderer called in-process, for the local stack and tests: the same render() as the
 * Lambda, one warm browser serving concurrent renders (each in its own browser context).
 */
import { closeBrowser, prewarm } from './browser.js';
import type { Renderer } from './contract.js';
import { render } from './render.js';

/** The browser starts launching now, beside the rest of the stack's start. */
export const createInProcessRenderer = (): Renderer => {
  prewarm();
  return { render };
};

/** Closes the browser and the egress proxy. A later render launches them again. */
export const closeRenderer = (): Promise<void> => closeBrowser();
