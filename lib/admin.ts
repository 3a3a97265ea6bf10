/**
 * The admin command (`npm run admin -- <command>`): operations on accounts that the API does not
 * offer, against the local stack's data (DATA_DIR) or a deployed table. Like lib/local, it runs
 * the service's own data layer (functions/adapters/dynamodb/accounts.ts) outside Lambda. bin/admin.ts only
 * hands it the arguments and the environment, so tests run it in-process.
 *
 *   set-plan --account <id> --plan <plan>   put an account on a plan (applies from its next request)
 *   find --email <email>                    the accounts with this email (GSI1, never a scan)
 *   get --account <id>                      one account
 *   export --account <id> [--out <file>] [--download <dir>]
 *                                           every item and PDF of the account, as JSON lines
 *   delete --account <id> [--yes]           removes all of it; without --yes only says what it would
 *   usage --month <yyyy-mm> [--format csv|jsonl]
 *                                           every account's month from the usage ledger (lib/admin-usage.ts)
 *   seed-starters                           creates or revises the starter templates (lib/starters)
 *
 * Where: `--table <name> --region <region>` (or TABLE_NAME and AWS_REGION) for a deployed table,
 * with the shell's AWS credentials; `--endpoint <url>` (or DYNAMODB_ENDPOINT) for a DynamoDB
 * emulator. Otherwise the local stack's data in DATA_DIR (`--data-dir`), through the running
 * stack when there is one, else opened directly. `export` and `delete` also need the PDF bucket:
 * `--bucket <name>` (or BUCKET_NAME) with `--table`, `--s3-endpoint` with `--endpoint`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import dynalite from 'dynalite';
import S3rver from 's3rver';
import { createAccountStore } from '../functions/adapters/dynamodb/accounts.js';
import type { Account } from '../functions/domain/accounts/accounts.js';
import { DEFAULT_PLANS, type Plan, plansFromVariable, plansSchema } from '../functions/settings.js';
import {
  type AccountData,
  type AccountDataTarget,
  collectAccountData,
  countByType,
  deleteAccountData,
  exportLine,
  readObject,
} from './account-data.js';
import { formatRows, MONTH_PATTERN, monthRows, USAGE_FORMATS, type UsageFormat } from './admin-usage.js';
import { closeServer, listen } from './local/http-server.js';
import { LOCAL_REGION } from './local/issuer.js';
import { readDataDir } from './local/options.js';
import {
  isAlive,
  LOCAL_BUCKET_NAME,
  LOCAL_CREDENTIALS,
  LOCAL_TABLE_NAME,
  lockDataDir,
  RUNNING_STACK_FILE,
  type RunningStack,
} from './local/stack.js';
import { seedStarters } from './starters/seed.js';

export const ADMIN_USAGE = `usage: npm run --silent admin -- <command> [options]

commands:
  set-plan --account <id> --plan <plan>   put an account on a plan; it applies from the account's next request
  find --email <email>                    the accounts with this email (case-insensitive), as JSON
  get --account <id>                      one account, as JSON
  export --account <id>                   every item of the account (account, API keys (digests, never
                                          the keys), templates with every version, jobs, usage, rate
                                          windows, idempotency records) and the list of its PDFs, as
                                          JSON lines; --out <file> instead of stdout, --download <dir>
                                          saves the PDFs there too
  delete --account <id> [--yes]           removes all of that, PDFs included (its keys stop working
                                          first); without --yes only prints what it would delete.
                                          Running it again is safe. The user pool's user is not touched.
  usage --month <yyyy-mm> [--format csv|jsonl]
                                          every account's month from the usage ledger: renders, pages,
                                          bytes, included and overage units, estimated charge (CSV by default)
  seed-starters                           creates the starter templates (public templates of the account
                                          system:starters) or revises those that changed; safe to run again

where (default: the local stack's data in DATA_DIR, .data/):
  --table <name> --region <region>        a deployed table (also TABLE_NAME, AWS_REGION), with your AWS credentials
  --endpoint <url>                        with --table: a DynamoDB emulator (also DYNAMODB_ENDPOINT)
  --data-dir <dir>                        the local stack's DATA_DIR
  --bucket <name>                         export, delete with --table: the PDF bucket (also BUCKET_NAME)
  --s3-endpoint <url>                     with --endpoint: an S3 emulator

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
  bucket: { type: 'string' },
  's3-endpoint': { type: 'string' },
  out: { type: 'string' },
  download: { type: 'string' },
  yes: { type: 'boolean' },
  month: { type: 'string' },
  format: { type: 'string' },
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
  /** Opened only for the commands that need it (export, delete). */
  readonly bucket: { readonly s3: S3Client; readonly bucketName: string } | undefined;
  close(): Promise<void>;
}

const emulatorS3 = (endpoint: string, region: string) =>
  new S3Client({ region, endpoint, forcePathStyle: true, credentials: LOCAL_CREDENTIALS });

/** A stopped local stack's bucket: s3rver on its DATA_DIR, as the stack serves it. */
const openLocalBucket = async (dataDir: string): Promise<{ s3: S3Client; close(): Promise<void> }> => {
  const s3rver = new S3rver({ silent: true, directory: join(dataDir, 's3'), vhostBuckets: false });
  const server = createServer(s3rver.callback());
  const { port } = await listen(server, 0, '127.0.0.1');
  const s3 = emulatorS3(`http://127.0.0.1:${port}`, LOCAL_REGION);
  return {
    s3,
    close: async () => {
      s3.destroy();
      await closeServer(server, 1000);
    },
  };
};

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
const openLocal = async (dataDir: string, needsBucket: boolean): Promise<Target> => {
  const running = await readRunningStack(dataDir);
  if (running) {
    if (needsBucket && (running.s3Endpoint === undefined || running.bucketName === undefined)) {
      throw new AdminError('the running local stack does not say where its bucket is: restart it');
    }
    const client = emulatorClient(running.dynamoDbEndpoint, running.region);
    const s3 = needsBucket && running.s3Endpoint ? emulatorS3(running.s3Endpoint, running.region) : undefined;
    return {
      db: documentClient(client),
      tableName: running.tableName,
      description: `the local stack's table (running, pid ${running.pid}, DATA_DIR ${dataDir})`,
      deployed: false,
      bucket: s3 ? { s3, bucketName: running.bucketName ?? LOCAL_BUCKET_NAME } : undefined,
      close: async () => {
        client.destroy();
        s3?.destroy();
      },
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
  let bucket: Awaited<ReturnType<typeof openLocalBucket>> | undefined;
  try {
    const { port } = await listen(server, 0, '127.0.0.1');
    client = emulatorClient(`http://127.0.0.1:${port}`, LOCAL_REGION);
    if (needsBucket) bucket = await openLocalBucket(dataDir);
  } catch (e) {
    client?.destroy();
    await closeServer(server, 1000).catch(() => {});
    await unlock();
    throw e;
  }
  const opened = client;
  const openedBucket = bucket;
  return {
    db: documentClient(opened),
    tableName: LOCAL_TABLE_NAME,
    description: `the local stack's table (DATA_DIR ${dataDir})`,
    deployed: false,
    bucket: openedBucket ? { s3: openedBucket.s3, bucketName: LOCAL_BUCKET_NAME } : undefined,
    close: async () => {
      opened.destroy();
      await openedBucket?.close();
      await closeServer(server, 1000);
      await unlock();
    },
  };
};

const openTarget = async (values: Arguments['values'], env: Env, needsBucket: boolean): Promise<Target> => {
  const tableName = nonBlank(values.table) ?? nonBlank(env.TABLE_NAME);
  const endpoint = nonBlank(values.endpoint) ?? nonBlank(env.DYNAMODB_ENDPOINT);
  if (tableName === undefined) {
    if (nonBlank(values.endpoint) !== undefined) throw new AdminUsageError('--endpoint needs --table');
    return openLocal(resolve(nonBlank(values['data-dir']) ?? readDataDir(env)), needsBucket);
  }
  const region = nonBlank(values.region) ?? nonBlank(env.AWS_REGION) ?? nonBlank(env.AWS_DEFAULT_REGION);
  if (region === undefined) throw new AdminUsageError('--region (or AWS_REGION) is required with --table');
  const bucketName = nonBlank(values.bucket) ?? nonBlank(env.BUCKET_NAME);
  const s3Endpoint = nonBlank(values['s3-endpoint']);
  if (needsBucket && bucketName === undefined) {
    throw new AdminUsageError(
      "--bucket (or BUCKET_NAME) is required with --table: the account's PDFs are there",
    );
  }
  if (needsBucket && endpoint !== undefined && s3Endpoint === undefined) {
    throw new AdminUsageError('--s3-endpoint is required with --endpoint');
  }
  const client = endpoint
    ? emulatorClient(endpoint, region)
    : // The SDK's provider chain: AWS_PROFILE, SSO, environment variables, ...
      new DynamoDBClient({ region });
  const s3 = needsBucket
    ? s3Endpoint
      ? emulatorS3(s3Endpoint, region)
      : new S3Client({ region })
    : undefined;
  return {
    db: documentClient(client),
    tableName,
    description: endpoint ? `table ${tableName} at ${endpoint}` : `table ${tableName} in ${region}`,
    deployed: endpoint === undefined,
    bucket: s3 && bucketName ? { s3, bucketName } : undefined,
    close: async () => {
      client.destroy();
      s3?.destroy();
    },
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
    { needsBucket = false }: { readonly needsBucket?: boolean } = {},
  ): Command =>
  async (values, env, io) => {
    const args = check(values);
    const target = await openTarget(values, env, needsBucket);
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

const dataTarget = (target: Target): AccountDataTarget => {
  if (!target.bucket) throw new Error('the bucket was not opened');
  return { db: target.db, tableName: target.tableName, ...target.bucket };
};

const summary = (accountId: string, data: AccountData) => ({
  account: accountId,
  table_items: data.items.length,
  by_type: countByType(data.items),
  bucket_objects: data.objects.length,
  bucket_bytes: data.objects.reduce((n, o) => n + o.sizeBytes, 0),
});

const exportAccount: Command = withTarget(
  (values) => ({
    accountId: required(values.account, '--account'),
    out: nonBlank(values.out),
    download: nonBlank(values.download),
  }),
  async ({ accountId, out, download }, target, _env, io) => {
    const data = await collectAccountData(dataTarget(target), accountId);
    if (data.items.length === 0 && data.objects.length === 0) throw noAccount(accountId, target);
    const lines: string[] = data.items.map((item) => exportLine({ kind: 'item', item }));
    for (const o of data.objects) {
      let file: string | undefined;
      if (download !== undefined) {
        file = resolve(download, o.key);
        // Keys are ours (pdf/<account>/<job>.pdf), but a path that leaves the directory is never written.
        if (!file.startsWith(`${resolve(download)}/`))
          throw new AdminError(`object key ${o.key} leaves ${download}`);
        await mkdir(join(file, '..'), { recursive: true });
        await writeFile(file, await readObject(dataTarget(target), o.key));
      }
      lines.push(
        exportLine({
          kind: 'object',
          bucket: target.bucket?.bucketName,
          key: o.key,
          size_bytes: o.sizeBytes,
          last_modified: o.lastModified,
          ...(file ? { file } : {}),
        }),
      );
    }
    const text = lines.map((l) => `${l}\n`).join('');
    if (out !== undefined) await writeFile(out, text, { mode: 0o600 });
    else io.stdout(text);
    io.stderr(
      `account ${accountId}: exported ${data.items.length} items and ${data.objects.length} objects from ${target.description}${out ? ` to ${out}` : ''}\n`,
    );
  },
  { needsBucket: true },
);

const deleteAccount: Command = withTarget(
  (values) => ({ accountId: required(values.account, '--account'), yes: values.yes === true }),
  async ({ accountId, yes }, target, _env, io) => {
    const data = await collectAccountData(dataTarget(target), accountId);
    if (data.items.length === 0 && data.objects.length === 0) {
      io.stderr(`account ${accountId}: nothing to delete in ${target.description}\n`);
      io.stdout(json({ ...summary(accountId, data), deleted: true }));
      return;
    }
    if (!yes) {
      io.stdout(json({ ...summary(accountId, data), deleted: false }));
      throw new AdminError(
        `account ${accountId}: would delete the above from ${target.description}; nothing deleted: run again with --yes`,
      );
    }
    await deleteAccountData(dataTarget(target), data);
    io.stdout(json({ ...summary(accountId, data), deleted: true }));
    io.stderr(
      `account ${accountId}: deleted ${data.items.length} items and ${data.objects.length} objects from ${target.description}${
        target.deployed
          ? '; delete the user from the user pool too, or its next sign-in makes a new, empty account'
          : ''
      }\n`,
    );
  },
  { needsBucket: true },
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
  export: exportAccount,
  delete: deleteAccount,
  usage: withTarget(
    (values) => {
      const month = required(values.month, '--month');
      if (!MONTH_PATTERN.test(month)) throw new AdminUsageError(`--month must be yyyy-mm, got "${month}"`);
      const format = nonBlank(values.format) ?? 'csv';
      if (!(USAGE_FORMATS as readonly string[]).includes(format)) {
        throw new AdminUsageError(`--format must be one of ${USAGE_FORMATS.join(', ')}, got "${format}"`);
      }
      return { month, format: format as UsageFormat };
    },
    async ({ month, format }, target, env, io) => {
      const { plans } = knownPlans(env, target.deployed);
      const rows = await monthRows(target.db, target.tableName, month, plans);
      io.stdout(formatRows(rows, format));
      io.stderr(`usage ${month}: ${rows.length} accounts from ${target.description}\n`);
    },
  ),
  'seed-starters': withTarget(
    () => ({}),
    async (_args, target, _env, io) => {
      const outcome = await seedStarters(target.db, target.tableName);
      io.stderr(
        `starter templates in ${target.description}: ${outcome.created.length} created, ${outcome.revised.length} revised, ${outcome.unchanged.length} unchanged\n`,
      );
      io.stdout(json(outcome));
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
