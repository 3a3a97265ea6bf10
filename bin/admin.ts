/**
 * `npm run --silent admin -- <command>`: account operations (plans, lookup by email, export and
 * deletion of an account's data) against the local stack's data or a deployed table. The command
 * itself is lib/admin.ts.
 */
import { runAdmin } from '../lib/admin.js';

process.exitCode = await runAdmin(process.argv.slice(2), process.env, {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
});
