/**
 * The templating worker: a worker thread of the renderer that executes templates and nothing
 * else. It imports only the engine, starts with an empty environment and under memory limits
 * (templating-pool.ts), and answers one job at a time:
 *
 *   pool   → { id, source, variables, maxOutputBytes, deadline, timeLimitMs, parts? }
 *   worker → { type: 'ready', tid? } once loaded, then { type: 'done', id, html, parts? } or { type: 'failed', id, error }
 *
 * `parts` are more templates (a header, a footer) executed after `source` with the same variables
 * and the same deadline: one render's templating is one job, bounded once.
 *
 * The limit is this thread's CPU time: the engine checks its deadline against Date.now(), which in
 * this thread (it runs nothing but the engine, and a template cannot read the clock) counts this
 * thread's CPU time. A process stalled mid-template (SIGSTOP, a laptop's sleep) or a machine busy
 * with other work no longer ran the template past its limit: the stall was not the template's.
 * `deadline` from the pool is the wall clock's, used only where Node lacks process.threadCpuUsage.
 *
 * Built as its own file beside the renderer Lambda's bundle (lib/renderer-function.ts); started
 * from TypeScript source through templating-worker-tsx.mjs.
 */
import { parentPort } from 'node:worker_threads';
import { parseTemplateData, renderTemplate, TemplateError } from '../templating/index.js';
import { currentThreadId } from '../templating/thread-cpu.js';

export interface TemplatingJob {
  readonly id: number;
  readonly source: string;
  /**
   * JSON text written by stringifyTemplateData (a message cannot carry template data's key order
   * and numbers as objects), or an object as JSON.parse makes it.
   */
  readonly variables: string | Record<string, unknown>;
  readonly maxOutputBytes: number;
  /** Epoch ms. */
  readonly deadline: number;
  readonly timeLimitMs: number;
  readonly parts?: readonly TemplatingPart[];
}

export interface TemplatingPart {
  readonly source: string;
  readonly maxOutputBytes: number;
}

export interface WorkerTemplateError {
  /** TemplateError's kinds; 'internal' for anything else the worker threw (not the author's to see). */
  readonly kind: TemplateError['kind'] | 'internal';
  readonly message: string;
  readonly line?: number;
  readonly variable?: string;
  /** A 'limit' error because the output passed maxOutputBytes. */
  readonly outputTooLarge: boolean;
  /** The index in `parts` of the template that failed; absent: `source`. */
  readonly part?: number;
}

export type WorkerMessage =
  /** tid: the thread's kernel id, by which the pool reads its CPU time (Linux). */
  | { readonly type: 'ready'; readonly tid?: number }
  | { readonly type: 'done'; readonly id: number; readonly html: string; readonly parts?: readonly string[] }
  | { readonly type: 'failed'; readonly id: number; readonly error: WorkerTemplateError };

const toWorkerError = (e: unknown): WorkerTemplateError => {
  if (e instanceof TemplateError) {
    const outputTooLarge = (e as { outputTooLarge?: unknown }).outputTooLarge === true;
    return {
      kind: e.kind,
      message: e.message,
      ...(e.line !== undefined ? { line: e.line } : {}),
      ...(e.variable !== undefined ? { variable: e.variable } : {}),
      outputTooLarge,
    };
  }
  return { kind: 'internal', message: e instanceof Error ? e.message : String(e), outputTooLarge: false };
};

/** This thread's CPU time in ms (process.threadCpuUsage, Node 22.19+), or undefined without it. */
const threadCpuMs = (): number | undefined => {
  const usage = (process as { threadCpuUsage?: () => NodeJS.CpuUsage }).threadCpuUsage?.();
  return usage ? (usage.user + usage.system) / 1000 : undefined;
};

const cpuClock = threadCpuMs() !== undefined;
if (cpuClock) Date.now = () => threadCpuMs() as number;

const port = parentPort;
if (port) {
  port.on('message', (job: TemplatingJob) => {
    let answer: WorkerMessage;
    let part: number | undefined;
    const deadline = cpuClock ? Date.now() + job.timeLimitMs : job.deadline;
    try {
      // timeLimitMs is what the engine names in its time-limit message (engines without it ignore it).
      const options = (maxOutputBytes: number) => ({
        maxOutputBytes,
        deadline,
        timeLimitMs: job.timeLimitMs,
      });
      const variables = typeof job.variables === 'string' ? parseTemplateData(job.variables) : job.variables;
      const html = renderTemplate(job.source, variables, options(job.maxOutputBytes));
      const parts: string[] = [];
      for (const [i, p] of (job.parts ?? []).entries()) {
        part = i;
        parts.push(renderTemplate(p.source, variables, options(p.maxOutputBytes)));
      }
      answer = { type: 'done', id: job.id, html, ...(job.parts ? { parts } : {}) };
    } catch (e) {
      answer = {
        type: 'failed',
        id: job.id,
        error: { ...toWorkerError(e), ...(part !== undefined ? { part } : {}) },
      };
    }
    port.postMessage(answer);
  });
  const tid = currentThreadId();
  port.postMessage({ type: 'ready', ...(tid !== undefined ? { tid } : {}) } satisfies WorkerMessage);
}
