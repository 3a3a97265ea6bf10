/**
 * Entry point of a local stack in a process of its own (started by startStackProcess() in
 * child-stack.ts, never run by hand): the shared stack of the integration tests, and the stacks
 * of tests whose requests may block the event loop that serves them.
 *
 * Reads STACK_DATA_DIR and STACK_HANDLER_ENV (JSON), prints one JSON line describing the stack
 * (a StackDescription), and stops on SIGTERM, SIGINT or when its stdin closes (the process that
 * started it went away).
 */
import { startLocalStack } from '../../lib/local/stack.js';
import type { StackDescription } from './child-stack.js';

const dataDir = process.env.STACK_DATA_DIR;
if (!dataDir) throw new Error('STACK_DATA_DIR is required');
const env = JSON.parse(process.env.STACK_HANDLER_ENV ?? '{}') as Record<string, string>;

const stack = await startLocalStack({ port: 0, dataDir, env, quiet: true });
const { issueToken: _issueToken, close: _close, ...description } = stack;
process.stdout.write(`${JSON.stringify(description satisfies StackDescription)}\n`);

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
