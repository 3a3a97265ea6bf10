/**
 * `npm run --silent token -- --sub <account> --email <email>`: bin/token.ts, run from its bundle as
 * `npm start` runs the stack (lib/local/start-bundle.mjs), built on the first call after a source
 * changed: through tsx, each call loaded tsx and compiled the command first (about 2 s of a core).
 */
import { runBundled, TOKEN } from '../lib/local/start-bundle.mjs';

await runBundled(TOKEN, () => import('./token.ts'), 'token');
