/**
 * The renderer host as the renderer Lambda runs it: bundled by esbuild (puppeteer-core and the
 * service's code in one file, @sparticuz/chromium left to node_modules as the layer serves it),
 * with its templating worker bundled beside it, run by plain Node. Through tsx, the same process
 * held ~60 MiB more (measured PSS of Node, 27-page report: 145-153 MiB through tsx, 83-122 MiB
 * bundled), which the Lambda never has.
 *
 * Built under node_modules/.cache so that the bundle resolves @sparticuz/chromium from the
 * project's node_modules, as the handler resolves it from the layer.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { type BuildOptions, build } from 'esbuild';

const ESM_REQUIRE_BANNER =
  "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);";

/** Builds the host and its worker; answers the host's path. */
export const buildRendererHost = async (root: string): Promise<string> => {
  const outdir = join(root, 'node_modules', '.cache', 'pdf-render-service', 'bench-renderer');
  await mkdir(outdir, { recursive: true });
  const common: BuildOptions = {
    bundle: true,
    platform: 'node',
    target: 'node22',
    // ES builds first: a UMD main (jsonc-parser's) requires its parts at run time, which no bundle holds.
    mainFields: ['module', 'main'],
    external: ['@sparticuz/chromium'],
    logLevel: 'error',
  };
  const host = join(outdir, 'renderer-host.mjs');
  await Promise.all([
    build({
      ...common,
      entryPoints: [join(root, 'test', 'bench', 'renderer-host.ts')],
      format: 'esm',
      banner: { js: ESM_REQUIRE_BANNER },
      outfile: host,
    }),
    build({
      ...common,
      entryPoints: [join(root, 'functions', 'renderer', 'templating-worker.ts')],
      format: 'cjs',
      outfile: join(outdir, 'templating-worker.cjs'),
    }),
  ]);
  return host;
};
