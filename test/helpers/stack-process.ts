/**
 * Entry point of a local stack in a process of its own (started by startStackProcess() in
 * template-abuse.ts, never run by hand). For tests whose requests may block the event loop that
 * serves them, such as a template that never ends on an engine that runs in the API's thread:
 * the test process keeps its own timers, so it can tell a hung stack from a slow one and report
 * a failure instead of hanging with it.
 *
 * Reads STACK_DATA_DIR and STACK_HANDLER_ENV (JSON), prints one JSON line describing the stack,
 * and stops on SIGTERM, SIGINT or when its stdin closes (the test process went away).
 */
import { startLocalStack } from '../../lib/local/stack.js';

const dataDir = process.env.STACK_DATA_DIR;
if (!dataDir) throw new Error('STACK_DATA_DIR is required');
const env = JSON.parse(process.env.STACK_HANDLER_ENV ?? '{}') as Record<string, string>;

const stack = await startLocalStack({ port: 0, dataDir, env, quiet: true });
process.stdout.write(
  `${JSON.stringify({
    baseUrl: stack.baseUrl,
    dynamoDbEndpoint: stack.dynamoDbEndpoint,
    tableName: stack.tableName,
    region: stack.region,
    dataDir: stack.dataDir,
  })}\n`,
);

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  stack.close().finally(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.stdin.on('end', stop);
process.stdin.on('close', stop);
process.stdin.resume();
