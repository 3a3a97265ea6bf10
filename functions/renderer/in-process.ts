/**
 * The renderer called in-process, for the local stack and tests: the same render() as the
 * Lambda, one warm browser serving concurrent renders (each in its own browser context), and the
 * templating workers beside it (templating-pool.ts: templates never run on the main thread, which
 * here also serves the API). Each call makes a renderer of its own; close it when done.
 */
import { type RendererConfig, readRendererConfig } from '../core/config.js';
import { createRenderer, type RendererInstance, type RendererOptions } from './renderer.js';

/**
 * The browser and a templating worker start now, beside the rest of the stack's start.
 * @param config the renderer's configuration; @default read from this process's environment
 */
export const createInProcessRenderer = (
  config: RendererConfig = readRendererConfig(),
  options: RendererOptions = {},
): RendererInstance => {
  const renderer = createRenderer(config, options);
  renderer.prewarm();
  return renderer;
};
