/**
 * `npm run --silent admin -- <command>`: bin/admin.ts (lib/admin.ts), run from its bundle as
 * `npm start` runs the stack (lib/local/start-bundle.mjs), built on the first call after a source
 * changed.
 */
import { ADMIN, runBundled } from '../lib/local/start-bundle.mjs';

await runBundled(ADMIN, () => import('./admin.ts'), 'admin');
