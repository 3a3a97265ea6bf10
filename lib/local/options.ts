/**
 * The local stack's own options, read from the environment in this one place (the handlers read
 * theirs through functions/core/config.ts). bin/local.ts and bin/token.ts both use it, so the
 * server and the token command agree on DATA_DIR.
 */
import { resolve } from 'node:path';
import { INTEGER_SETTINGS, PLANS_VARIABLE } from '../../functions/settings.js';
import { LOCAL_VARIABLES, RENDERER_VARIABLES } from '../../functions/wiring.js';
import { parseOrigins } from '../cors.js';

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
  /** `CORS_ALLOWED_ORIGINS`: comma-separated origins browsers may call the API from. */
  readonly corsAllowedOrigins: readonly string[];
  /**
   * `RENDERER_SPARE_SESSIONS` (0 or 1, default 1): open each render's page ahead of it, as the
   * renderer Lambda does (functions/renderer/browser.ts), so that `npm start` serves as the
   * benchmark measures it; 0 opens each render's page when it starts.
   */
  readonly rendererSpareSessions: 0 | 1;
}

const spareSessions = (env: Env): 0 | 1 => {
  const raw = value(env, 'RENDERER_SPARE_SESSIONS');
  if (raw === '0') return 0;
  if (raw === undefined || raw === '1') return 1;
  throw new LocalOptionsError(`RENDERER_SPARE_SESSIONS must be 0 or 1, got "${raw}"`);
};

export const readLocalOptions = (env: Env = process.env): LocalOptions => ({
  port: readPort(env),
  dataDir: readDataDir(env),
  corsAllowedOrigins: parseOrigins(value(env, 'CORS_ALLOWED_ORIGINS')),
  rendererSpareSessions: spareSessions(env),
});

/**
 * The service settings given to the local stack in its environment (PLANS, RENDER_BUDGET_MS,
 * the limits, the renderer's), and nothing else: cloud variables in the shell (AWS_PROFILE,
 * RENDERER_FUNCTION_NAME, ...) never reach the local handlers.
 */
export const readServiceEnvironment = (env: Env = process.env): Record<string, string> => {
  const names = [
    PLANS_VARIABLE,
    ...Object.values(INTEGER_SETTINGS).map((s) => s.variable),
    // The renderer's own (functions/wiring.ts; read by functions/core/config.ts).
    ...Object.values(RENDERER_VARIABLES),
    // The webhooks' test allowance, as the renderer's above.
    LOCAL_VARIABLES.webhookAllowHosts,
  ];
  const picked: Record<string, string> = {};
  for (const name of names) {
    const v = value(env, name);
    if (v !== undefined) picked[name] = v;
  }
  return picked;
};
