/**
 * Prints a local session token (a Cognito-style ID token from the local issuer) and nothing else,
 * so it can be captured: TOKEN=$(npm run --silent token -- --sub user-1 --email user-1@example.com)
 * Uses the same DATA_DIR as the server and creates the key pair if the server never ran. When no
 * local stack runs on that DATA_DIR, it says so on stderr: a server started with another
 * DATA_DIR has another key, and would refuse the token.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadOrCreateIssuer } from '../lib/local/issuer.js';
import { readDataDir } from '../lib/local/options.js';

const USAGE = 'usage: npm run --silent token -- --sub <account id> --email <email> [--ttl <seconds>]';

class UsageError extends Error {}

const parse = (argv: string[]): { sub: string; email: string; ttlSeconds: number } => {
  let values: { sub?: string; email?: string; ttl?: string };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { sub: { type: 'string' }, email: { type: 'string' }, ttl: { type: 'string' } },
      strict: true,
      allowPositionals: false,
    }));
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const sub = values.sub?.trim();
  const email = values.email?.trim();
  if (!sub) throw new UsageError('--sub is required');
  if (!email) throw new UsageError('--email is required');
  const ttlSeconds = values.ttl === undefined ? 3600 : Number(values.ttl);
  if (!/^\d+$/.test(values.ttl ?? '3600') || ttlSeconds < 1) {
    throw new UsageError(`--ttl must be a positive integer (seconds), got "${values.ttl}"`);
  }
  return { sub, email, ttlSeconds };
};

/** Whether a local stack holds DATA_DIR now (its pid file names a live process). */
const stackRunsOn = async (dataDir: string): Promise<boolean> => {
  const pid = Number((await readFile(join(dataDir, 'local-stack.pid'), 'utf8').catch(() => '')).trim());
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

try {
  const args = parse(process.argv.slice(2));
  const dataDir = readDataDir();
  if (!(await stackRunsOn(dataDir))) {
    process.stderr.write(
      `token: no local stack is running on DATA_DIR ${dataDir}; the token is signed with its key, so a server ` +
        'started with another DATA_DIR refuses it (set the same DATA_DIR for both)\n',
    );
  }
  const issuer = await loadOrCreateIssuer(dataDir);
  process.stdout.write(`${await issuer.issueToken(args)}\n`);
} catch (e) {
  process.stderr.write(`token: ${(e as Error).message}\n${e instanceof UsageError ? `${USAGE}\n` : ''}`);
  process.exitCode = 2;
}
