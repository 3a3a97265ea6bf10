/**
 * Memory is a renderer's limit like pages and bytes (issue 37): the renderer knows its budget
 * (RendererConfig.memoryBudget: the Lambda function's memory size, or RENDERER_MEMORY_BUDGET_MIB)
 * and stops the render that would go over it, with PDF_TOO_COMPLEX, instead of being killed for
 * it (in Lambda an out-of-memory kill, three attempts and a vague PDF_RENDERING_INTERRUPTED).
 *
 * How: while renders run, the memory of Chromium's process tree (and Node's own, where the
 * renderer is a process of its own, as in Lambda) is sampled from /proc every SAMPLE_MS: each
 * process's PSS (smaps_rollup), so that memory Chromium's processes share is counted once, RSS
 * where PSS cannot be read. Past the budget less its headroom, the render that has run longest is
 * stopped (in Lambda the only one): its wait ends at once with MemoryBudgetError, its page is
 * crashed and its context closed (session.ts). A page busy printing does not stop for that (its
 * renderer's main thread is in layout or paint), so when the tree is still over the line
 * GRACE_MS later, its largest renderer process is killed, or the whole browser when there is
 * none (single-process): the next render launches a new one.
 *
 * Why sampling and not Chromium's own signals: its memory-pressure notifications come from the
 * system (none in a Lambda sandbox or a container with room left on the host), and the V8 heap
 * limit covers the page's JavaScript, not layout or the print, where a long table spends its
 * memory. Measured (2 cores): one sample of a 12-process tree takes 1-3 ms; a long table grows
 * at up to ~300 MB/s while printing, ~30 MB per sample, well inside the headroom.
 */
import { readdir, readFile } from 'node:fs/promises';
import type { MemoryBudget } from '../core/config.js';
import { log } from './log.js';

/** How often the tree is sampled while a render runs. */
export const SAMPLE_MS = 100;
/** How long a stopped render's memory has to go back under the line before its process is killed. */
const GRACE_MS = 1_500;
const MiB = 1024 * 1024;

export type { MemoryBudget };

/**
 * What is left for the renderer's own work: 10% of the budget and at least 128 MiB is kept for
 * what sampling does not see in time (the growth between two samples, page cache, the upload's
 * buffers).
 */
export const memoryLimitBytes = (budget: MemoryBudget): number =>
  budget.mib * MiB - Math.max(128 * MiB, Math.round(budget.mib * MiB * 0.1));

/** A render stopped because the renderer's memory went over its budget. */
export class MemoryBudgetError extends Error {
  constructor(
    readonly usedBytes: number,
    readonly budgetMiB: number,
  ) {
    super(`the renderer's memory (${Math.round(usedBytes / MiB)} MiB) went over its budget`);
    this.name = 'MemoryBudgetError';
  }
}

const readText = (path: string): Promise<string | undefined> =>
  readFile(path, 'latin1').catch(() => undefined);

/** A process's proportional set size (bytes), its resident set size where PSS cannot be read. */
const processBytes = async (pid: number): Promise<number> => {
  const rollup = await readText(`/proc/${pid}/smaps_rollup`);
  const pss = rollup && /^Pss:\s+(\d+) kB/m.exec(rollup);
  if (pss) return Number(pss[1]) * 1024;
  const status = await readText(`/proc/${pid}/status`);
  const rss = status && /^VmRSS:\s+(\d+) kB/m.exec(status);
  return rss ? Number(rss[1]) * 1024 : 0;
};

/** A process's children, from each of its threads' `children` file. */
const childrenOf = async (pid: number): Promise<number[]> => {
  const tasks = await readdir(`/proc/${pid}/task`).catch(() => [] as string[]);
  const lists = await Promise.all(tasks.map((t) => readText(`/proc/${pid}/task/${t}/children`)));
  return lists.flatMap((l) => (l ?? '').split(/\s+/).filter(Boolean).map(Number));
};

export interface TreeSample {
  readonly totalBytes: number;
  /** Each process of the tree below the root: its pid, bytes and whether it is a page's renderer. */
  readonly processes: readonly { readonly pid: number; readonly bytes: number; readonly renderer: boolean }[];
}

/** The memory of `root` and its descendants (the root's own left out when `withRoot` is false). */
export const sampleTree = async (root: number, withRoot = true): Promise<TreeSample> => {
  const pids: number[] = [];
  const queue = [root];
  while (queue.length > 0 && pids.length < 1000) {
    const pid = queue.shift() as number;
    pids.push(pid);
    queue.push(...(await childrenOf(pid)));
  }
  const processes = await Promise.all(
    pids.map(async (pid) => {
      const [bytes, cmdline] = await Promise.all([
        withRoot || pid !== root ? processBytes(pid) : Promise.resolve(0),
        pid === root ? Promise.resolve(undefined) : readText(`/proc/${pid}/cmdline`),
      ]);
      return { pid, bytes, renderer: cmdline?.includes('--type=renderer') === true };
    }),
  );
  return { totalBytes: processes.reduce((sum, p) => sum + p.bytes, 0), processes };
};

/** One render being watched: its stop signal. */
export interface WatchedRender {
  /** Rejects with MemoryBudgetError when this render is the one stopped. */
  readonly stopped: Promise<never>;
  /** The render is over: no longer watched. */
  end(): void;
}

export interface MemoryWatch {
  readonly budget: MemoryBudget;
  /**
   * Watches a render running on the browser whose process is `browserPid()`; `killBrowser` ends
   * that browser when memory will not go down otherwise.
   */
  watch(target: {
    readonly browserPid: () => number | undefined;
    readonly killBrowser: (reason: string) => void;
  }): WatchedRender;
  /** The highest total seen since the last call (bytes): benchmarks and tests. */
  takePeak(): number;
}

interface Running {
  readonly startedAt: number;
  readonly stop: (e: MemoryBudgetError) => void;
  readonly browserPid: () => number | undefined;
  readonly killBrowser: (reason: string) => void;
}

export const createMemoryWatch = (budget: MemoryBudget): MemoryWatch => {
  const limit = memoryLimitBytes(budget);
  const running = new Set<Running>();
  let timer: NodeJS.Timeout | undefined;
  let sampling = false;
  let peak = 0;
  /** When a render was last stopped, and on which browser: the grace before a kill. */
  let stoppedAt: { at: number; run: Running } | undefined;

  const sample = async (): Promise<void> => {
    const first = running.values().next().value ?? stoppedAt?.run;
    const pid = first?.browserPid();
    if (!first || pid === undefined) {
      stoppedAt = undefined;
      return;
    }
    const tree = await sampleTree(pid);
    const node = budget.includesNode ? await processBytes(process.pid) : 0;
    const total = tree.totalBytes + node;
    peak = Math.max(peak, total);
    if (total <= limit) {
      stoppedAt = undefined;
      return;
    }
    const now = performance.now();
    if (stoppedAt) {
      if (now - stoppedAt.at < GRACE_MS) return;
      // Still over the line after the stopped page was told to stop: its process goes.
      const largest = tree.processes.filter((p) => p.renderer).sort((a, b) => b.bytes - a.bytes)[0];
      if (largest) {
        log('WARN', 'memory-budget-kill', { pid: largest.pid, mib: Math.round(largest.bytes / MiB) });
        try {
          process.kill(largest.pid, 'SIGKILL');
        } catch {
          // Gone already.
        }
      } else {
        stoppedAt.run.killBrowser('over its memory budget');
      }
      stoppedAt = { at: now, run: stoppedAt.run };
      return;
    }
    // The render that has run longest is the one stopped: in Lambda the only one.
    const oldest = [...running].sort((a, b) => a.startedAt - b.startedAt)[0];
    if (!oldest) return;
    log('WARN', 'memory-budget-exceeded', {
      mib: Math.round(total / MiB),
      budgetMiB: budget.mib,
      limitMiB: Math.round(limit / MiB),
    });
    running.delete(oldest);
    oldest.stop(new MemoryBudgetError(total, budget.mib));
    stoppedAt = { at: now, run: oldest };
  };

  const tick = (): void => {
    if (sampling) return;
    sampling = true;
    sample()
      .catch(() => undefined)
      .finally(() => {
        sampling = false;
        startOrStop();
      });
  };

  const startOrStop = (): void => {
    if (running.size > 0 || stoppedAt) {
      if (!timer) {
        timer = setInterval(tick, SAMPLE_MS);
        timer.unref();
      }
    } else if (timer) {
      clearInterval(timer);
      timer = undefined;
    }
  };

  return {
    budget,
    watch({ browserPid, killBrowser }) {
      let stop: (e: MemoryBudgetError) => void = () => {};
      const stopped = new Promise<never>((_, reject) => {
        stop = reject;
      });
      stopped.catch(() => undefined);
      const run: Running = { startedAt: performance.now(), stop, browserPid, killBrowser };
      running.add(run);
      startOrStop();
      tick();
      return {
        stopped,
        end: () => {
          running.delete(run);
          startOrStop();
        },
      };
    },
    takePeak: () => {
      const p = peak;
      peak = 0;
      return p;
    },
  };
};
