/**
 * The admin command (`npm run admin -- <command>`): operations on accounts that the API does not
 * offer, against the local stack's data (DATA_DIR) or a deployed table. Like lib/local, it runs
 * the service's own data layer (functions/adapters/dynamodb/accounts.ts) outside Lambda. bin/admin.ts only
 * hands it the arguments and the environment, so tests run it in-process.
 *
 *   set-plan --account <id> --plan <plan>   put an account on a plan (applies from its next request)
 *   find --email <email>                    the accounts with this email (GSI1, never a scan)
 *   get --account <id>                      one account
 *
 * Where: `--table <name> --region <region>` (or TABLE_NAME and AWS_REGION) for a deployed table,
 * with the shell's AWS credentials; `--endpoint <url>` (or DYNAMODB_ENDPOINT) for a DynamoDB
 * emulator. Otherwise the local stack's data in DATA_DIR (`--data-dir`), through the running
 * stack when there is one, else opened directly.
 */
import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import dynalite from 'dynalite';
import { createAccountStore } from '../functions/adapters/dynamodb/accounts.js';
import type { Account } from '../functions/domain/accounts.js';
import { DEFAULT_PLANS, type Plan, plansFromVariable, plansSchema } from '../functions/settings.js';
import { closeServer, listen } from './local/http-server.js';
import { LOCAL_REGION } from './local/issuer.js';
import { readDataDir } from './local/options.js';
import {
  isAlive,
  LOCAL_CREDENTIALS,
  LOCAL_TABLE_NAME,
  lockDataDir,
  RUNNING_STACK_FILE,
  type RunningStack,
} from './local/stack.js';

export const ADMIN_USAGE = `usage: npm run --silent admin -- <command> [options]

commands:
  set-plan --account <id> --plan <plan>   put an account on a plan; it applies from the account's next request
  find --email <email>                    the accounts with this email (case-insensitive), as JSON
  get --account <id>                      one account, as JSON

where (default: the local stack's data in DATA_DIR, .data/):
  --table <name> --region <region>        a deployed table (also TABLE_NAME, AWS_REGION), with your AWS credentials
  --endpoint <url>                        with --table: a DynamoDB emulator (also DYNAMODB_ENDPOINT)
  --data-dir <dir>                        the local stack's DATA_DIR

Plans are checked against PLANS when set (as the deployment's), else, for a deployed table, the
"plans" of cdk.json's context, else the default plans.`;

type Env = Readonly<Record<string, string | undefined>>;

export interface AdminIo {
  /** Results: JSON, one document per command. */
  stdout(text: string): void;
  /** What happened, errors and usage. */
  stderr(text: string): void;
}

/** Bad arguments: exit code 2, with the usage. */
export class AdminUsageError extends Error {
  override readonly name = 'AdminUsageError';
}

/** A refused operation (no such account, unknown plan): exit code 1. */
export class AdminError extends Error {
  override readonly name = 'AdminError';
}

const OPTIONS = {
  account: { type: 'string' },
  plan: { type: 'string' },
  email: { type: 'string' },
  table: { type: 'string' },
  region: { type: 'string' },
  endpoint: { type: 'string' },
  'data-dir': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

interface Arguments {
  readonly command: string | undefined;
  readonly values: {
    readonly [K in keyof typeof OPTIONS]?: (typeof OPTIONS)[K]['type'] extends 'string' ? string : boolean;
  };
}

const parse = (argv: readonly string[]): Arguments => {
  try {
    const { values, positionals } = parseArgs({
      args: [...argv],
      options: OPTIONS,
      strict: true,
      allowPositionals: true,
    });
    if (positionals.length > 1)
      throw new AdminUsageError(`one command at a time, got ${positionals.join(' ')}`);
    return { command: positionals[0], values };
  } catch (e) {
    if (e instanceof AdminUsageError) throw e;
    throw new AdminUsageError((e as Error).message);
  }
};

const nonBlank = (value: string | undefined): string | undefined => {
  const v = value?.trim();
  return v === undefined || v === '' ? undefined : v;
};

const required = (value: string | undefined, flag: string): string => {
  const v = nonBlank(value);
  if (v === undefined) throw new AdminUsageError(`${flag} is required`);
  return v;
};

// ---------------------------------------------------------------------------------------------
// Where the table is

interface Target {
  readonly db: DynamoDBDocumentClient;
  readonly tableName: string;
  /** For messages: which table this is. */
  readonly description: string;
  readonly deployed: boolean;
  close(): Promise<void>;
}

const documentClient = (client: DynamoDBClient) =>
  DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });

const readRunningStack = async (dataDir: string): Promise<RunningStack | undefined> => {
  try {
    const running = JSON.parse(await readFile(join(dataDir, RUNNING_STACK_FILE), 'utf8')) as RunningStack;
    return Number.isSafeInteger(running.pid) && isAlive(running.pid) ? running : undefined;
  } catch {
    return undefined;
  }
};

const emulatorClient = (endpoint: string, region: string) =>
  new DynamoDBClient({ region, endpoint, credentials: LOCAL_CREDENTIALS });

/** The local stack's table: through the running stack's dynalite, or the store opened here. */
const openLocal = async (dataDir: string): Promise<Target> => {
  const running = await readRunningStack(dataDir);
  if (running) {
    const client = emulatorClient(running.dynamoDbEndpoint, running.region);
    return {
      db: documentClient(client),
      tableName: running.tableName,
      description: `the local stack's table (running, pid ${running.pid}, DATA_DIR ${dataDir})`,
      deployed: false,
      close: async () => client.destroy(),
    };
  }
  const store = join(dataDir, 'dynamodb');
  if (!existsSync(store)) {
    throw new AdminError(
      `no local data in ${dataDir}: start the local stack once (npm start), or set DATA_DIR`,
    );
  }
  // The stack must not open the store while this command has it (LevelDB allows one process).
  const unlock = await lockDataDir(dataDir);
  const server = dynalite({ path: store, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 }) as Server;
  let client: DynamoDBClient | undefined;
  try {
    const { port } = await listen(server, 0, '127.0.0.1');
    client = emulatorClient(`http://127.0.0.1:${port}`, LOCAL_REGION);
  } catch (e) {
    await unlock();
    throw e;
  }
  const opened = client;
  return {
    db: documentClient(opened),
    tableName: LOCAL_TABLE_NAME,
    description: `the local stack's table (DATA_DIR ${dataDir})`,
    deployed: false,
    close: async () => {
      opened.destroy();
      await closeServer(server, 1000);
      await unlock();
    },
  };
};

const openTarget = async (values: Arguments['values'], env: Env): Promise<Target> => {
  const tableName = nonBlank(values.table) ?? nonBlank(env.TABLE_NAME);
  const endpoint = nonBlank(values.endpoint) ?? nonBlank(env.DYNAMODB_ENDPOINT);
  if (tableName === undefined) {
    if (nonBlank(values.endpoint) !== undefined) throw new AdminUsageError('--endpoint needs --table');
    return openLocal(resolve(nonBlank(values['data-dir']) ?? readDataDir(env)));
  }
  const region = nonBlank(values.region) ?? nonBlank(env.AWS_REGION) ?? nonBlank(env.AWS_DEFAULT_REGION);
  if (region === undefined) throw new AdminUsageError('--region (or AWS_REGION) is required with --table');
  const client = endpoint
    ? emulatorClient(endpoint, region)
    : // The SDK's provider chain: AWS_PROFILE, SSO, environment variables, ...
      new DynamoDBClient({ region });
  return {
    db: documentClient(client),
    tableName,
    description: endpoint ? `table ${tableName} at ${endpoint}` : `table ${tableName} in ${region}`,
    deployed: endpoint === undefined,
    close: async () => client.destroy(),
  };
};

// ---------------------------------------------------------------------------------------------
// Plans

const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** cdk.json's context "plans", where the README has deployments keep their own. */
const cdkJsonPlans = (): Record<string, Plan> | undefined => {
  let context: { plans?: unknown } | undefined;
  try {
    context = (
      JSON.parse(readFileSync(join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as { context?: { plans?: unknown } }
    ).context;
  } catch {
    return undefined;
  }
  if (context?.plans === undefined) return undefined;
  const parsed = plansSchema.safeParse(context.plans);
  if (!parsed.success) throw new AdminError('cdk.json: context "plans" is not a valid plan table');
  return parsed.data;
};

const knownPlans = (env: Env, deployed: boolean): { plans: Record<string, Plan>; source: string } => {
  const fromVariable = nonBlank(env.PLANS);
  if (fromVariable !== undefined) return { plans: plansFromVariable(fromVariable), source: 'PLANS' };
  const fromCdkJson = deployed ? cdkJsonPlans() : undefined;
  if (fromCdkJson) return { plans: fromCdkJson, source: 'cdk.json' };
  return { plans: { ...DEFAULT_PLANS }, source: 'the default plans' };
};

// ---------------------------------------------------------------------------------------------
// Commands

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

type Command = (values: Arguments['values'], env: Env, io: AdminIo) => Promise<void>;

/** Checks the arguments before anything is opened, then runs `run` against the target. */
const withTarget =
  <A>(
    check: (values: Arguments['values']) => A,
    run: (args: A, target: Target, env: Env, io: AdminIo) => Promise<void>,
  ): Command =>
  async (values, env, io) => {
    const args = check(values);
    const target = await openTarget(values, env);
    try {
      await run(args, target, env, io);
    } finally {
      await target.close();
    }
  };

const accountsOf = (target: Target) =>
  createAccountStore(target.db, target.tableName, { now: () => new Date() });

const noAccount = (accountId: string, target: Target) =>
  new AdminError(
    `no account "${accountId}" in ${target.description}; an account exists from its first session request`,
  );

const COMMANDS: Record<string, Command> = {
  'set-plan': withTarget(
    (values) => ({ accountId: required(values.account, '--account'), plan: required(values.plan, '--plan') }),
    async ({ accountId, plan }, target, env, io) => {
      const { plans, source } = knownPlans(env, target.deployed);
      if (!Object.hasOwn(plans, plan)) {
        throw new AdminError(
          `unknown plan "${plan}"; the plans (from ${source}): ${Object.keys(plans).join(', ')}`,
        );
      }
      const changed = await accountsOf(target).setPlan(accountId, plan);
      if (!changed) throw noAccount(accountId, target);
      io.stderr(
        `account ${accountId}: plan ${changed.before.plan} → ${changed.after.plan} (applies from its next request)\n`,
      );
      io.stdout(json(changed.after));
    },
  ),
  find: withTarget(
    (values) => ({ email: required(values.email, '--email') }),
    async ({ email }, target, _env, io) => {
      const found: Account[] = await accountsOf(target).findByEmail(email);
      if (found.length === 0) throw new AdminError(`no account with email ${email} in ${target.description}`);
      io.stdout(json(found));
    },
  ),
  get: withTarget(
    (values) => ({ accountId: required(values.account, '--account') }),
    async ({ accountId }, target, _env, io) => {
      const account = await accountsOf(target).get(accountId);
      if (!account) throw noAccount(accountId, target);
      io.stdout(json(account));
    },
  ),
};

/** Runs one admin command; resolves to the exit code (0 done, 1 refused or failed, 2 bad arguments). */
export const runAdmin = async (argv: readonly string[], env: Env, io: AdminIo): Promise<number> => {
  try {
    const { command, values } = parse(argv);
    if (values.help || command === 'help') {
      io.stdout(`${ADMIN_USAGE}\n`);
      return 0;
    }
    if (command === undefined) throw new AdminUsageError('a command is required');
    const run = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
    if (!run) throw new AdminUsageError(`unknown command "${command}"`);
    await run(values, env, io);
    return 0;
  } catch (e) {
    if (e instanceof AdminUsageError) {
      io.stderr(`admin: ${e.message}\n${ADMIN_USAGE}\n`);
      return 2;
    }
    if (e instanceof AdminError) {
      io.stderr(`admin: ${e.message}\n`);
      return 1;
    }
    io.stderr(`admin: ${(e as Error).name}: ${(e as Error).message}\n`);
    return 1;
  }
};
