/**
 * `npm start`: bin/local.ts, run from its bundle (lib/local/start-bundle.mjs), which is built
 * first when there is none yet or a source changed since the last build.
 */
import { runBundled, START } from '../lib/local/start-bundle.mjs';

await runBundled(START, () => import('./local.ts'), 'local stack');
