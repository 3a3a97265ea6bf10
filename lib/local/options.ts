/**
 * The local stack's own options, read from the environment in this one place (the handlers read
 * theirs through functions/core/config.ts). bin/local.ts and bin/token.ts both use it, so the
 * server and the token command agree on DATA_DIR.
 */
import { resolve } from 'node:path';

export const DEFAULT_PORT = 3000;
export const DEFAULT_DATA_DIR = '.data';

export class LocalOptionsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LocalOptionsError';
  }
}

type Env = Readonly<Record<string, string | undefined>>;

const value = (env: Env, name: string): string | undefined => {
  const v = env[name]?.trim();
  return v === undefined || v === '' ? undefined : v;
};

/** `DATA_DIR` (default `.data/`), resolved against the working directory. */
export const readDataDir = (env: Env = process.env): string =>
  resolve(value(env, 'DATA_DIR') ?? DEFAULT_DATA_DIR);

/** `PORT` (default 3000; 0 picks a free port). */
export const readPort = (env: Env = process.env): number => {
  const raw = value(env, 'PORT');
  if (raw === undefined) return DEFAULT_PORT;
  const port = Number(raw);
  if (!/^\d+$/.test(raw) || port > 65535) {
    throw new LocalOptionsError(`PORT must be an integer from 0 to 65535, got "${raw}"`);
  }
  return port;
};

export interface LocalOptions {
  readonly port: number;
  readonly dataDir: string;
}

export const readLocalOptions = (env: Env = process.env): LocalOptions => ({
  port: readPort(env),
  dataDir: readDataDir(env),
});
