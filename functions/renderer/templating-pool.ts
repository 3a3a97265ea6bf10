/**
 * Template execution, in worker threads of the renderer.
 *
 * Why here: a template is code from strangers. The API functions hold the table, the presigner
 * and the API-key secret, so they only parse templates (syntax, required variables) and hand the
 * source and variables to the renderer, whose role can do nothing but write its own logs and
 * whose process holds no secret. The rendered HTML never leaves the renderer.
 *
 * Why a worker: the engine is bounded by itself (a deadline and an output limit), and the pool
 * bounds it again from outside, where no engine bug can reach:
 * - time: the engine stops itself at TIME_LIMIT_MS of the worker's CPU time (templating-worker.ts);
 *   a worker that has not answered WATCHDOG_FACTOR × TIME_LIMIT_MS plus a margin after its job
 *   started, not counting the time the whole process was stopped (the worker with it), is
 *   terminated and replaced; the render fails with INVALID_HTML_TEMPLATE naming the limit;
 * - memory: resourceLimits cap each worker's heap, so a memory bomb kills the worker (and is
 *   answered "Templating ran out of memory"), not the renderer;
 * - environment: workers start with an empty process.env and import nothing but the engine.
 * The main thread never runs a template, so it keeps serving (the local stack serves every
 * account's requests in one process): the pool grows on demand up to MAX_WORKERS, and queues
 * beyond that. Workers are kept and reused: a job costs a message each way, not a worker start.
 */
import { existsSync } from 'node:fs';
import { type ResourceLimits, Worker, type WorkerOptions } from 'node:worker_threads';
import { threadCpuMs } from '../templating/thread-cpu.js';
import { log } from './log.js';
import type { TemplatingJob, WorkerMessage, WorkerTemplateError } from './templating-worker.js';

/** The contract's templating time per render. */
export const TIME_LIMIT_MS = 2_000;
/** How long past the limit a worker may take to answer before it is terminated. */
export const TIME_LIMIT_MARGIN_MS = 250;
export const MAX_WORKERS = 4;
/**
 * The watchdog's period, in time limits. The engine stops itself at the limit in CPU time
 * (templating-worker.ts); the watchdog is for an engine that stops checking. It reads the worker
 * thread's CPU time where it can (Linux), so a busy machine is never blamed on the template: at
 * load 17 on 2 cores a template of 800 ms CPU took over 4 s of wall clock, and a wall-clock
 * watchdog failed it as over its 2,000 ms limit.
 */
export const WATCHDOG_FACTOR = 2;
/**
 * Where the worker's CPU time cannot be read, the watchdog's period is wall-clock time (process
 * stalls left out); where it can, a wall-clock bound of this many periods still stops a worker
 * that neither answers nor uses the CPU.
 */
export const WALL_BACKSTOP_FACTOR = 10;
/** How often the pool's clock looks for stalls while a job runs (see createRunClock). */
const TICK_MS = 100;
/** A tick this late means the process did not run (stopped, or starved), and neither did the worker. */
const STALL_MS = 300;

/**
 * Milliseconds that leaves out the time the process was stopped (SIGSTOP, a laptop's sleep):
 * while anything runs, a tick every TICK_MS notes how late it came, and a tick STALL_MS late or
 * more is counted as a stall. The worker was stopped too, so its watchdog does not count it.
 */
const createRunClock = () => {
  let stalledMs = 0;
  let last = performance.now();
  let ticker: NodeJS.Timeout | undefined;
  const tick = (): void => {
    const now = performance.now();
    const late = now - last - TICK_MS;
    if (late >= STALL_MS) stalledMs += late;
    last = now;
  };
  return {
    /** Ticks while any job runs. */
    running(busy: boolean): void {
      if (busy && !ticker) {
        last = performance.now();
        ticker = setInterval(tick, TICK_MS);
        ticker.unref();
      } else if (!busy && ticker) {
        clearInterval(ticker);
        ticker = undefined;
      }
    },
    now(): number {
      if (ticker) tick(); // a stall that just ended, before its tick ran
      return performance.now() - stalledMs;
    },
  };
};
/**
 * How long a job waits for the worker it was given to finish loading: one that takes longer is
 * stuck (from source, tsx may take ~0.5 s on a busy machine). Counted from the job, not from the
 * worker's start, which may lie before a Lambda freeze.
 */
const START_TIMEOUT_MS = 15_000;

export const WORKER_RESOURCE_LIMITS: ResourceLimits = {
  maxOldGenerationSizeMb: 256,
  maxYoungGenerationSizeMb: 32,
  stackSizeMb: 4,
};

/**
 * The options every templating worker starts with: no environment (a template must not be able to
 * read the process's settings, whatever the engine lets through), none of the parent's Node flags
 * (loaders included), and the memory limits.
 */
export const workerOptions = (resourceLimits: ResourceLimits = WORKER_RESOURCE_LIMITS): WorkerOptions => ({
  name: 'templating',
  env: {},
  execArgv: [],
  resourceLimits,
});

/**
 * The worker's script. The renderer Lambda's bundle carries templating-worker.cjs beside its own
 * file (lib/renderer-function.ts builds it), and `npm start`'s bundle too (lib/local/start-bundle.mjs).
 * From TypeScript source (vitest, tsx) there is no such file, and templating-worker-tsx.mjs starts
 * templating-worker.ts through tsx.
 */
export const defaultWorkerScript = (): URL => {
  const bundled = new URL('./templating-worker.cjs', import.meta.url);
  return existsSync(bundled) ? bundled : new URL('./templating-worker-tsx.mjs', import.meta.url);
};

export interface TemplateFailureDetails {
  readonly line?: number;
  readonly name?: string;
  /** The part (RenderPart.name) that failed; absent: the main template. */
  readonly part?: string;
}

/** A template executed after the main one, with the same variables and within the same deadline. */
export interface RenderPart {
  /** Names the part in failures (e.g. `header`). */
  readonly name: string;
  readonly source: string;
  readonly maxOutputBytes: number;
}

export type TemplatingOutcome =
  | {
      readonly ok: true;
      readonly html: string;
      /** The parts' HTML, in order, when parts were given. */
      readonly parts?: readonly string[];
    }
  | {
      readonly ok: false;
      readonly code: 'INVALID_HTML_TEMPLATE' | 'HTML_CONTENT_TOO_LARGE' | 'PDF_RENDERING_FAILED';
      /** Safe to show the template's author. */
      readonly message: string;
      readonly details?: TemplateFailureDetails;
    };

export interface TemplatingPoolOptions {
  /** @default defaultWorkerScript() */
  readonly script?: URL;
  /** @default MAX_WORKERS */
  readonly maxWorkers?: number;
  /** @default TIME_LIMIT_MS */
  readonly timeLimitMs?: number;
  /** @default TIME_LIMIT_MARGIN_MS */
  readonly marginMs?: number;
  /** @default WORKER_RESOURCE_LIMITS */
  readonly resourceLimits?: ResourceLimits;
}

export interface TemplatingPool {
  /** Executes a template in a worker. Never rejects. */
  render(
    source: string,
    /** JSON text written by stringifyTemplateData, or an object as JSON.parse makes it. */
    variables: string | Record<string, unknown>,
    options: { readonly maxOutputBytes: number; readonly parts?: readonly RenderPart[] },
  ): Promise<TemplatingOutcome>;
  /** Starts a worker ahead of the first render, when there is none. */
  prewarm(): void;
  /** Terminates every worker; jobs in flight fail. A later render starts workers again. */
  close(): Promise<void>;
  /** Workers alive (starting, idle or busy), and the thread id of each: for tests and logs. */
  stats(): {
    readonly workers: number;
    readonly busy: number;
    readonly queued: number;
    readonly threadIds: number[];
  };
}

interface Task {
  readonly source: string;
  readonly variables: string | Record<string, unknown>;
  readonly maxOutputBytes: number;
  readonly parts: readonly RenderPart[] | undefined;
  readonly resolve: (outcome: TemplatingOutcome) => void;
}

interface Slot {
  readonly worker: Worker;
  /** worker.threadId, kept: it reads -1 once the worker has exited. */
  readonly threadId: number;
  ready: boolean;
  /** Removed from the pool: terminated, crashed or exited. */
  gone: boolean;
  task: Task | undefined;
  jobId: number;
  timer: NodeJS.Timeout | undefined;
  /** The last 'error' event (e.g. ERR_WORKER_OUT_OF_MEMORY), read when the worker exits. */
  error: unknown;
  /** The worker thread's kernel id, from its 'ready' message: its CPU time is read by it. */
  tid: number | undefined;
}

const failed = (
  code: 'INVALID_HTML_TEMPLATE' | 'HTML_CONTENT_TOO_LARGE' | 'PDF_RENDERING_FAILED',
  message: string,
  details?: TemplateFailureDetails,
): TemplatingOutcome => ({ ok: false, code, message, ...(details ? { details } : {}) });

const tooLarge = (maxOutputBytes: number, part?: RenderPart): TemplatingOutcome =>
  part
    ? failed(
        'HTML_CONTENT_TOO_LARGE',
        `The ${part.name}'s HTML is over ${part.maxOutputBytes} bytes after templating`,
        { part: part.name },
      )
    : failed('HTML_CONTENT_TOO_LARGE', `The HTML is over ${maxOutputBytes} bytes after templating`);

const outcomeOfError = (error: WorkerTemplateError, task: Task): TemplatingOutcome => {
  const part = error.part === undefined ? undefined : task.parts?.[error.part];
  if (error.kind === 'limit' && error.outputTooLarge) return tooLarge(task.maxOutputBytes, part);
  if (error.kind === 'internal') {
    // The engine's own fault: its text is ours, not the template's.
    log('ERROR', 'templating-internal-error', { message: error.message });
    return failed('PDF_RENDERING_FAILED', 'Templating failed in the renderer.');
  }

  const details: TemplateFailureDetails = {
    ...(error.line !== undefined ? { line: error.line } : {}),
    ...(error.variable !== undefined ? { name: error.variable } : {}),
    ...(part ? { part: part.name } : {}),
  };
  return failed('INVALID_HTML_TEMPLATE', error.message, details);
};

const isOutOfMemory = (e: unknown): boolean =>
  (e as { code?: unknown } | null)?.code === 'ERR_WORKER_OUT_OF_MEMORY';

export const createTemplatingPool = (options: TemplatingPoolOptions = {}): TemplatingPool => {
  const maxWorkers = Math.max(1, options.maxWorkers ?? MAX_WORKERS);
  const timeLimitMs = options.timeLimitMs ?? TIME_LIMIT_MS;
  const marginMs = options.marginMs ?? TIME_LIMIT_MARGIN_MS;
  const resourceLimits = options.resourceLimits ?? WORKER_RESOURCE_LIMITS;
  let script: URL | undefined = options.script;

  const slots: Slot[] = [];
  const queue: Task[] = [];
  const clock = createRunClock();
  let nextJobId = 1;

  const remove = (slot: Slot): void => {
    if (slot.gone) return;
    slot.gone = true;
    clearTimeout(slot.timer);
    slot.timer = undefined;
    const index = slots.indexOf(slot);
    if (index >= 0) slots.splice(index, 1);
  };

  /** Ends the slot's task (if any) with `outcome`, and frees the slot for the next one. */
  const finish = (slot: Slot, outcome: TemplatingOutcome): void => {
    const task = slot.task;
    slot.task = undefined;
    clearTimeout(slot.timer);
    slot.timer = undefined;
    slot.worker.unref();
    clock.running(slots.some((s) => s.task !== undefined));
    task?.resolve(outcome);
  };

  /** Takes a worker out of the pool for good, ending its task with `outcome`; work goes on without it. */
  const discard = (slot: Slot, outcome: TemplatingOutcome, reason: string): void => {
    if (slot.gone) return;
    remove(slot);
    finish(slot, outcome);
    log('WARN', 'templating-worker-discarded', { reason, threadId: slot.threadId });
    slot.worker.terminate().catch(() => {});
    // A fresh worker replaces it at once when it was the last one, so the next render finds it warm
    // (not one that never started: that would start and fail in a loop).
    if (queue.length > 0) pump();
    else if (slots.length === 0 && slot.ready) prewarm();
  };

  /**
   * Terminates the worker once its thread has used `periodMs` of CPU time since the job began, or,
   * where that cannot be read, once it has run `periodMs` on the run clock (stalls of the process
   * left out); unless it answers first.
   */
  const armWatchdog = (slot: Slot, periodMs: number): void => {
    clearTimeout(slot.timer);
    const startedAt = clock.now();
    const cpuAtStart = threadCpuMs(slot.tid);
    const wallMs = cpuAtStart === undefined ? periodMs : periodMs * WALL_BACKSTOP_FACTOR;
    const check = (waitMs: number): void => {
      slot.timer = setTimeout(() => {
        const cpu = threadCpuMs(slot.tid);
        const cpuLeft =
          cpu === undefined || cpuAtStart === undefined ? Infinity : periodMs - (cpu - cpuAtStart);
        const wallLeft = wallMs - (clock.now() - startedAt);
        // CPU time cannot pass faster than the wall clock: the next look is due after the least left.
        if (cpuLeft >= 1 && wallLeft >= 1) return check(Math.max(TICK_MS, Math.min(cpuLeft, wallLeft)));
        discard(
          slot,
          failed('INVALID_HTML_TEMPLATE', `Templating exceeded its ${timeLimitMs} ms limit`),
          'time limit',
        );
      }, waitMs);
    };
    clock.running(true);
    check(periodMs);
  };

  const dispatch = (slot: Slot): void => {
    const task = slot.task;
    if (!task || slot.gone) return;
    if (!slot.ready) {
      slot.timer ??= setTimeout(
        () => discard(slot, failed('PDF_RENDERING_FAILED', 'Templating could not start.'), 'start timed out'),
        START_TIMEOUT_MS,
      );
      return;
    }
    slot.jobId = nextJobId++;
    const job: TemplatingJob = {
      id: slot.jobId,
      source: task.source,
      variables: task.variables,
      maxOutputBytes: task.maxOutputBytes,
      deadline: Date.now() + timeLimitMs,
      timeLimitMs,
      ...(task.parts
        ? { parts: task.parts.map((p) => ({ source: p.source, maxOutputBytes: p.maxOutputBytes })) }
        : {}),
    };
    armWatchdog(slot, timeLimitMs * WATCHDOG_FACTOR + marginMs);
    slot.worker.ref();
    try {
      slot.worker.postMessage(job);
    } catch (e) {
      // Variables that cannot be cloned cannot come from JSON; a fault of the caller's code.
      log('ERROR', 'templating-post-failed', { message: (e as Error).message });
      finish(slot, failed('PDF_RENDERING_FAILED', 'Templating failed in the renderer.'));
      pump();
    }
  };

  const spawn = (): Slot => {
    script ??= defaultWorkerScript();
    const started = performance.now();
    const worker = new Worker(script, workerOptions(resourceLimits));
    // An idle worker never keeps the process alive; a busy one does (see dispatch and finish).
    worker.unref();
    const slot: Slot = {
      worker,
      threadId: worker.threadId,
      ready: false,
      gone: false,
      task: undefined,
      jobId: 0,
      timer: undefined,
      error: undefined,
      tid: undefined,
    };
    slots.push(slot);
    worker.on('message', (message: WorkerMessage) => {
      if (slot.gone) return;
      if (message.type === 'ready') {
        clearTimeout(slot.timer);
        slot.timer = undefined;
        slot.ready = true;
        slot.tid = message.tid;
        log('INFO', 'templating-worker-started', {
          ms: Math.round(performance.now() - started),
          threadId: slot.threadId,
        });
        dispatch(slot);
        return;
      }
      const task = slot.task;
      if (!task || message.id !== slot.jobId) return;
      if (message.type === 'done') {
        // The engine stops at the limit; checked again here for whatever engine runs.
        const over = (html: string, max: number) => html.length > max / 3 && Buffer.byteLength(html) > max;
        const parts = task.parts ?? [];
        const overPart = parts.find((p, i) => over(message.parts?.[i] ?? '', p.maxOutputBytes));
        if (over(message.html, task.maxOutputBytes)) finish(slot, tooLarge(task.maxOutputBytes));
        else if (overPart) finish(slot, tooLarge(task.maxOutputBytes, overPart));
        else if (task.parts && message.parts?.length !== parts.length)
          finish(slot, failed('PDF_RENDERING_FAILED', 'Templating failed in the renderer.'));
        else finish(slot, { ok: true, html: message.html, ...(task.parts ? { parts: message.parts } : {}) });
      } else {
        finish(slot, outcomeOfError(message.error, task));
      }
      pump();
    });
    worker.on('error', (e) => {
      slot.error = e;
    });
    worker.on('exit', (code) => {
      if (slot.gone) return;
      const e = slot.error;
      if (isOutOfMemory(e)) {
        discard(slot, failed('INVALID_HTML_TEMPLATE', 'Templating ran out of memory'), 'out of memory');
      } else {
        log('ERROR', 'templating-worker-exited', {
          code,
          threadId: slot.threadId,
          ...(e instanceof Error ? { error: e.message } : {}),
        });
        discard(slot, failed('PDF_RENDERING_FAILED', 'Templating failed in the renderer.'), 'exited');
      }
    });
    return slot;
  };

  const prewarm = (): void => {
    if (slots.length > 0) return;
    try {
      spawn();
    } catch (e) {
      log('WARN', 'templating-prewarm-failed', { message: (e as Error).message });
    }
  };

  /** Hands queued tasks to idle workers, starting workers up to the cap. */
  const pump = (): void => {
    while (queue.length > 0) {
      let slot = slots.find((s) => !s.task && !s.gone);
      if (!slot) {
        if (slots.length >= maxWorkers) return;
        try {
          slot = spawn();
        } catch (e) {
          // The worker could not even be created (e.g. its script is missing).
          log('ERROR', 'templating-spawn-failed', { message: (e as Error).message });
          if (slots.length > 0) return; // the running workers take the queue
          for (const task of queue.splice(0))
            task.resolve(failed('PDF_RENDERING_FAILED', 'Templating could not start.'));
          return;
        }
      }
      slot.task = queue.shift();
      dispatch(slot);
    }
  };

  return {
    render(source, variables, { maxOutputBytes, parts }) {
      return new Promise<TemplatingOutcome>((resolve) => {
        queue.push({ source, variables, maxOutputBytes, parts, resolve });
        pump();
      });
    },

    prewarm,

    async close() {
      const closing = slots.splice(0);
      const waiting = queue.splice(0);
      const shutDown = failed('PDF_RENDERING_FAILED', 'The renderer shut down.');
      for (const slot of closing) {
        slot.gone = true;
        finish(slot, shutDown);
      }
      for (const task of waiting) task.resolve(shutDown);
      await Promise.all(closing.map((slot) => slot.worker.terminate().catch(() => {})));
    },

    stats: () => ({
      workers: slots.length,
      busy: slots.filter((s) => s.task).length,
      queued: queue.length,
      threadIds: slots.map((s) => s.threadId),
    }),
  };
};
