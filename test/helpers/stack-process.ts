/**
 * Entry point of a local stack in a process of its own (started by startStackProcess() in
 * child-stack.ts, never run by hand): the shared stack of the integration tests, and the stacks
 * of tests whose requests may block the event loop that serves them.
 *
 * Reads STACK_DATA_DIR, STACK_OPTIONS (JSON: ChildStackOptions, the handlers' env among them) and
 * STACK_OUTPUT_FILE, prints one JSON line
 * describing the stack (a StackDescription), and stops on SIGTERM, SIGINT or when its stdin closes (the process that
 * started it went away).
 */
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startLocalStack } from '../../lib/local/stack.js';
import type { StackDescription } from './child-stack.js';
import { childStackTakes, localStackOptionsOf } from './child-stack-options.js';
import { probeBuiltInPrototypes } from './prototype-probe.js';

const dataDir = process.env.STACK_DATA_DIR;
if (!dataDir) throw new Error('STACK_DATA_DIR is required');

// Everything the stack writes (the handlers' log lines) goes to STACK_OUTPUT_FILE too, written
// before the write returns: a test that reads it after an answer finds what the handler logged.
const outputFile = process.env.STACK_OUTPUT_FILE;
if (outputFile) {
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream) as (...a: unknown[]) => boolean;
    stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      appendFileSync(outputFile, chunk);
      return write(chunk, ...rest);
    }) as typeof stream.write;
  }
}
const options = JSON.parse(process.env.STACK_OPTIONS ?? '{}') as Record<string, unknown>;
if (!childStackTakes(options))
  throw new Error(`STACK_OPTIONS has options a stack process cannot take: ${process.env.STACK_OPTIONS}`);

const stack = await startLocalStack({
  ...localStackOptionsOf(options),
  port: 0,
  dataDir,
  quiet: true,
});

// For tests that attack the templates (template-injection): what changed on the built-in
// prototypes of this process and of its worker threads, where the templates run. Loopback only.
const probe = createServer((_req, res) => {
  probeBuiltInPrototypes().then(
    (threads) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(threads)),
    (error: unknown) => res.writeHead(500).end(String(error)),
  );
});
await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
probe.unref();
const prototypeProbeUrl = `http://127.0.0.1:${(probe.address() as AddressInfo).port}/`;

const { issueToken: _issueToken, close: _close, ...stackDescription } = stack;
const description = { ...stackDescription, prototypeProbeUrl };
process.stdout.write(`${JSON.stringify(description satisfies StackDescription)}\n`);

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  probe.close();
  stack.close().finally(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.stdin.on('end', stop);
process.stdin.on('close', stop);
process.stdin.resume();
