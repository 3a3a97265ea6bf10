/**
 * Parsing templates for the API off its thread, bounded in time and memory.
 *
 * Why: the API's thread serves every account (locally, every request of the stack's; in the cloud,
 * a function instance's whole invocation), and parsing is linear but not free: a 1 MiB template
 * takes 100-300 ms of CPU (more for one that is nothing but expressions), time in which nothing
 * else is answered. So a template of PARSE_OFF_THREAD_CHARACTERS or more is parsed in a worker
 * thread; a smaller one (nearly all: the invoice fixture is 3 KiB and parses in well under a
 * millisecond) is parsed in place, where a message each way would cost more than the parse.
 *
 * Bounds, enforced from outside the parser, where no parser bug can reach: a job that has not
 * answered PARSE_TIME_LIMIT_MS after it was handed to its worker terminates that worker, and a
 * worker's heap is capped (resourceLimits): either answers a TemplateError of kind 'limit' that
 * names the bound. Workers are kept and reused (a job costs a message each way, not a start), at
 * most PARSE_WORKERS of them, jobs beyond that wait their turn; an idle worker holds no process
 * open.
 *
 * Not a pool library: tinypool and piscina start their workers from an entry file of their own
 * package, resolved at run time beside their code, which the functions' single-file bundles do
 * not carry; this project's worker bundles (lib/service-function.ts, workerBundles) do.
 */
import { existsSync } from 'node:fs';
import { type ResourceLimits, Worker } from 'node:worker_threads';
import { type ParsedTemplate, parseTemplate, TemplateError } from './index.js';
import type { ParseJob, ParseWorkerMessage } from './parse-worker.js';
import { threadCpuMs } from './thread-cpu.js';

/** Templates at least this long (UTF-16 code units) are parsed in a worker. */
export const PARSE_OFF_THREAD_CHARACTERS = 16 * 1024;
/**
 * How long a parse may take in its worker: CPU time of the worker's thread (Linux), so that a
 * busy machine (the worker yields the CPU to the API's thread) is not blamed on the template; a
 * wall-clock bound of PARSE_WALL_FACTOR times it stops a worker whose CPU time cannot be read.
 */
export const PARSE_TIME_LIMIT_MS = 3_000;
export const PARSE_WALL_FACTOR = 10;
/** How often a running parse's CPU time is read. */
const CPU_TICK_MS = 100;

export const PARSE_WORKERS = 2;
/** A worker's memory: a 1 MiB template of nothing but expressions peaks at about 60 MB of heap. */
export const PARSE_RESOURCE_LIMITS: ResourceLimits = {
  maxOldGenerationSizeMb: 192,
  maxYoungGenerationSizeMb: 32,
  stackSizeMb: 4,
};
/** A worker that has not loaded by then is stuck (from source, tsx may take a second when busy). */
const START_TIMEOUT_MS = 15_000;

export const timeLimitMessage = (ms: number): string =>
  `Template syntax error: the template took more than ${ms} ms to parse`;
export const memoryLimitMessage = (mb: number): string =>
  `Template syntax error: the template needs more than ${mb} MiB to parse`;

/**
 * The worker's script: the API bundle's parse-worker.cjs beside it (lib/service-api.ts builds it;
 * `npm start`'s bundle has one too), else parse-worker-tsx.mjs, which starts parse-worker.ts
 * through tsx.
 */
const defaultScript = (): URL => {
  const bundled = new URL('./parse-worker.cjs', import.meta.url);
  return existsSync(bundled) ? bundled : new URL('./parse-worker-tsx.mjs', import.meta.url);
};

export interface TemplateParserOptions {
  /** @default PARSE_OFF_THREAD_CHARACTERS */
  readonly offThreadCharacters?: number;
  /** @default PARSE_TIME_LIMIT_MS */
  readonly timeLimitMs?: number;
  /** @default PARSE_RESOURCE_LIMITS */
  readonly resourceLimits?: ResourceLimits;
  /** @default PARSE_WORKERS */
  readonly workers?: number;
}

export interface TemplateParser {
  /** parseTemplate's answer; throws TemplateError (a syntax error, or a bound exceeded). */
  parse(source: string): Promise<ParsedTemplate>;
  /** Terminates the workers; a later parse starts them again. */
  close(): Promise<void>;
}

interface Task {
  readonly source: string;
  readonly resolve: (info: ParsedTemplate) => void;
  readonly reject: (e: Error) => void;
}

interface Slot {
  readonly worker: Worker;
  ready: boolean;
  gone: boolean;
  task: Task | undefined;
  id: number;
  timer: NodeJS.Timeout | undefined;
  error: unknown;
  /** The worker's thread id (Linux), for its CPU time. */
  tid: number | undefined;
}

const internal = (): TemplateError =>
  new TemplateError('Template syntax error: the template could not be parsed', 'syntax');

export const createTemplateParser = (options: TemplateParserOptions = {}): TemplateParser => {
  const offThread = options.offThreadCharacters ?? PARSE_OFF_THREAD_CHARACTERS;
  const timeLimitMs = options.timeLimitMs ?? PARSE_TIME_LIMIT_MS;
  const resourceLimits = options.resourceLimits ?? PARSE_RESOURCE_LIMITS;
  const maxWorkers = Math.max(1, options.workers ?? PARSE_WORKERS);
  const slots: Slot[] = [];
  const queue: Task[] = [];
  let nextId = 1;

  const end = (slot: Slot): Task | undefined => {
    const task = slot.task;
    slot.task = undefined;
    clearTimeout(slot.timer);
    slot.timer = undefined;
    slot.worker.unref();
    return task;
  };

  const discard = (slot: Slot, error: Error): void => {
    if (slot.gone) return;
    slot.gone = true;
    const index = slots.indexOf(slot);
    if (index >= 0) slots.splice(index, 1);
    end(slot)?.reject(error);
    slot.worker.terminate().catch(() => {});
    pump();
  };

  const dispatch = (slot: Slot): void => {
    const task = slot.task;
    if (!task || slot.gone) return;
    slot.worker.ref();
    if (!slot.ready) {
      slot.timer ??= setTimeout(() => discard(slot, internal()), START_TIMEOUT_MS);
      return;
    }
    clearTimeout(slot.timer);
    slot.id = nextId++;
    const overLimit = () => discard(slot, new TemplateError(timeLimitMessage(timeLimitMs), 'limit'));
    const cpuAtStart = threadCpuMs(slot.tid);
    const wallUntil = Date.now() + (cpuAtStart === undefined ? timeLimitMs : PARSE_WALL_FACTOR * timeLimitMs);
    slot.timer = setInterval(() => {
      const cpu = threadCpuMs(slot.tid);
      if (
        Date.now() > wallUntil ||
        (cpu !== undefined && cpuAtStart !== undefined && cpu - cpuAtStart > timeLimitMs)
      ) {
        overLimit();
      }
    }, CPU_TICK_MS);
    slot.worker.postMessage({ id: slot.id, source: task.source } satisfies ParseJob);
  };

  const start = (): Slot => {
    const worker = new Worker(defaultScript(), { name: 'parse', env: {}, execArgv: [], resourceLimits });
    const slot: Slot = {
      worker,
      ready: false,
      gone: false,
      task: undefined,
      id: 0,
      timer: undefined,
      error: undefined,
      tid: undefined,
    };
    worker.unref();
    worker.on('message', (m: ParseWorkerMessage) => {
      if (m.type === 'ready') {
        slot.ready = true;
        slot.tid = m.tid;
        dispatch(slot);
        return;
      }
      if (m.id !== slot.id || !slot.task) return;
      const task = end(slot) as Task;
      if (m.type === 'parsed') task.resolve(m.info);
      else if (m.type === 'failed') task.reject(new TemplateError(m.message, 'syntax', m.line));
      else task.reject(internal());
      pump();
    });
    worker.on('error', (e) => {
      slot.error = e;
    });
    worker.on('exit', () => {
      const outOfMemory = (slot.error as { code?: unknown } | undefined)?.code === 'ERR_WORKER_OUT_OF_MEMORY';
      const mb = resourceLimits.maxOldGenerationSizeMb ?? 0;
      discard(slot, outOfMemory ? new TemplateError(memoryLimitMessage(mb), 'limit') : internal());
    });
    slots.push(slot);
    return slot;
  };

  const pump = (): void => {
    while (queue.length > 0) {
      const slot = slots.find((s) => !s.task && !s.gone) ?? (slots.length < maxWorkers ? start() : undefined);
      if (!slot) return;
      slot.task = queue.shift();
      dispatch(slot);
    }
  };

  return {
    parse(source) {
      if (source.length < offThread) {
        try {
          return Promise.resolve(parseTemplate(source));
        } catch (e) {
          return Promise.reject(e);
        }
      }
      return new Promise<ParsedTemplate>((resolve, reject) => {
        queue.push({ source, resolve, reject });
        pump();
      });
    },
    async close() {
      const closing = slots.splice(0);
      for (const slot of closing) {
        slot.gone = true;
        end(slot)?.reject(internal());
      }
      await Promise.all(closing.map((s) => s.worker.terminate().catch(() => {})));
    },
  };
};

/** The API's parser: one per process, its workers started on the first large template. */
export const templateParser: TemplateParser = /* @__PURE__ */ createTemplateParser();
