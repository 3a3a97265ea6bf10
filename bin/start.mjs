/**
 * `npm start`: bin/local.ts, run from its bundle (lib/local/start-bundle.mjs), which is built
 * first when there is none yet or a source changed since the last build.
 */
import * as nodeModule from 'node:module';
import { dirname, join } from 'node:path';
import { buildStartBundle, freshBuild } from '../lib/local/start-bundle.mjs';

const fresh = freshBuild();
let entry;
if ('entry' in fresh) {
  entry = fresh.entry;
} else {
  const started = performance.now();
  process.stderr.write(`local stack: building bin/local.ts (${fresh.stale}) ...\n`);
  try {
    entry = await buildStartBundle();
    process.stderr.write(`local stack: built in ${Math.round(performance.now() - started)} ms\n`);
  } catch (e) {
    // A cache that cannot be written (a read-only node_modules) or a source esbuild refuses: the
    // sources run as they did before the bundle, and say what failed (tsx reports a source's error).
    process.stderr.write(
      `local stack: the build failed (${e instanceof Error ? e.message : String(e)}); running bin/local.ts through tsx\n`,
    );
  }
}
if (entry) {
  // V8's code for the bundle, kept beside it from the first start on: compiling its 8 MB again at
  // every start was about 130 ms of the 450 ms before the port was bound. Node 22.1 and later.
  nodeModule.enableCompileCache?.(join(dirname(entry), '.compile-cache'));
  await import(entry);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('./local.ts');
}
