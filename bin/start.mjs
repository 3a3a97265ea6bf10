/**
 * `npm start`: bin/local.ts, run from its bundle (lib/local/start-bundle.mjs), which is built
 * first when there is none yet or a source changed since the last build.
 */
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
  } catch (e) {
    process.stderr.write(`local stack: the build failed: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  }
  process.stderr.write(`local stack: built in ${Math.round(performance.now() - started)} ms\n`);
}
await import(entry);
