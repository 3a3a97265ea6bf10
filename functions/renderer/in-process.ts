/**
 * The renderer called in-process, for the local stack and tests: the same render() as the
 * Lambda, one warm browser serving concurrent renders (each in its own browser context).
 */
import { closeBrowser } from './browser.js';
import type { Renderer } from './contract.js';
import { render } from './render.js';

export const createInProcessRenderer = (): Renderer => ({ render });

/** Closes the browser and the egress proxy. A later render launches them again. */
export const closeRenderer = (): Promise<void> => closeBrowser();
