/**
 * A parse worker (parse-pool.ts): a worker thread that parses templates (never executes them) for
 * the API, one at a time:
 *
 *   pool   → { id, source }
 *   worker → { type: 'ready' } once loaded, then { type: 'parsed', id, info } or { type: 'failed', id, message, line? }
 *
 * Built as its own file beside the API functions' bundles that parse (lib/service-api.ts); started
 * from TypeScript source through parse-worker-tsx.mjs.
 */
import { constants, setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { type ParsedTemplate, parseTemplate, TemplateError } from './index.js';
import { currentThreadId } from './thread-cpu.js';

export interface ParseJob {
  readonly id: number;
  readonly source: string;
}

export type ParseWorkerMessage =
  | { readonly type: 'ready'; readonly tid?: number }
  | { readonly type: 'parsed'; readonly id: number; readonly info: ParsedTemplate }
  | { readonly type: 'failed'; readonly id: number; readonly message: string; readonly line?: number }
  | { readonly type: 'internal'; readonly id: number };

const answer = (job: ParseJob): ParseWorkerMessage => {
  try {
    return { type: 'parsed', id: job.id, info: parseTemplate(job.source, { cache: false }) };
  } catch (e) {
    if (!(e instanceof TemplateError)) return { type: 'internal', id: job.id };
    return {
      type: 'failed',
      id: job.id,
      message: e.message,
      ...(e.line !== undefined ? { line: e.line } : {}),
    };
  }
};

/**
 * This thread yields the CPU to the API's own (Linux: a thread's nice value is its own; its id is
 * /proc/thread-self's last part): a parse is somebody's request, and the thread it would take
 * the CPU from serves everybody's. Measured on 2 cores under load, with the parse at the same
 * priority another account's 10 ms GET took 30-50 ms while a 1 MiB template was parsed.
 */
const yieldCpu = (): number | undefined => {
  const tid = currentThreadId();
  if (tid === undefined) return undefined; // not Linux
  try {
    setPriority(tid, constants.priority.PRIORITY_LOW);
  } catch {
    // Not allowed: the parse runs at the thread's priority, off the API's thread still.
  }
  // The pool reads this thread's CPU time by it (its time limit is CPU time).
  return tid;
};

const port = parentPort;
if (port) {
  const tid = yieldCpu();
  port.on('message', (job: ParseJob) => port.postMessage(answer(job)));
  port.postMessage({ type: 'ready', ...(tid !== undefined ? { tid } : {}) } satisfies ParseWorkerMessage);
}
