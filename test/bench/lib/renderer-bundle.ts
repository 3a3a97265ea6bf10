/**
 * The renderer host as the renderer Lambda runs it: bundled by esbuild (puppeteer-core and the
 * service's code in one file, @sparticuz/chromium left to node_modules as the layer serves it),
 * with its templating worker bundled beside it, run by plain Node. Through tsx, the same process
 * held ~60 MiB more (measured PSS of Node, 27-page report: 145-153 MiB through tsx, 83-122 MiB
 * bundled), which the Lambda never has.
 *
 * Built as `npm start`'s stack is (lib/local/start-bundle.mjs: under node_modules/.cache, so that
 * @sparticuz/chromium resolves from the project's node_modules as the handler resolves it from the
 * layer), and again only when a source changed.
 */
import { type BundleTarget, currentBuild } from '../../../lib/local/start-bundle.mjs';

const RENDERER_HOST: BundleTarget = {
  name: 'bench-renderer',
  entry: 'test/bench/renderer-host.ts',
  out: 'renderer-host',
};

/** The host's bundle, built when there is none for the current sources; answers its path. */
export const buildRendererHost = (root: string): Promise<string> => currentBuild(root, RENDERER_HOST);
