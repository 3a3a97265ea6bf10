/**
 * Memory is a renderer's limit like pages and bytes (issue 37): the renderer knows its budget
 * (RendererConfig.memoryBudget: the Lambda function's memory size, or RENDERER_MEMORY_BUDGET_MIB)
 * and stops the render that would go over it, with PDF_TOO_COMPLEX, instead of being killed for
 * it (in Lambda an out-of-memory kill, three attempts and a vague PDF_RENDERING_INTERRUPTED).
 *
 * How: while renders run, the memory of Chromium's process tree (and Node's own, where the
 * renderer is a process of its own, as in Lambda) is sampled from /proc every SAMPLE_MS: each
 * process's PSS (smaps_rollup), so that memory Chromium's processes share is counted once, RSS
 * where PSS cannot be read. Past the budget less its headroom, the largest of Chromium's
 * processes is killed (SIGKILL): the renderer of the page that took the memory (its layout of a
 * long table), or the print's process; the whole browser when it is itself the largest
 * (single-process Chromium: the next render launches a new one). The page's render fails at once
 * (its renderer crashed, or its print failed) and, as a process was killed for the budget while
 * it ran, with PDF_TOO_COMPLEX (render.ts); the other renders, on processes of their own, go on.
 * Telling the page to stop instead (Page.crash, closing its context) does not work: a renderer
 * busy in layout or paint reads no message until it is done, and the memory is already gone.
 * Which render took the memory is known only by its process: the first version stopped the
 * render that had run longest, and stopped a page that was only waiting for a slow stylesheet
 * beside the long table that took the memory.
 *
 * Why sampling and not Chromium's own signals: its memory-pressure notifications come from the
 * system (none in a Lambda sandbox or a container with room left on the host), and the V8 heap
 * limit covers the page's JavaScript, not layout or the print, where a long table spends its
 * memory. Cost, measured on a warm browser's 5 processes (2 cores under a load of ~25): PSS of
 * each (smaps_rollup) 6.7 ms of CPU a sample, too much ten times a second; RSS (statm) 0.8 ms.
 * So each sample reads RSS, which is never less than PSS, and PSS only when RSS is past the line
 * (the decision is PSS's); the tree's processes are found again once a second. A long table grew
 * by ~50 MB a second in test/bench/memory.ts (2,144 MiB in 43 s), ~5 MB a sample.
 */
import { readdir, readFile } from 'node:fs/promises';
import type { MemoryBudget } from '../core/config.js';
import { log } from './log.js';

/** How often the tree is sampled while a render runs. */
export const SAMPLE_MS = 100;
/** The tree's processes are found again every this many samples (1 s). */
const TREE_EVERY = 10;
/** How long after a kill the memory has to go back under the line before another process is killed. */
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

/** A process's proportional set size (bytes): memory it shares with others counted in part. */
const pssBytes = async (pid: number): Promise<number> => {
  const rollup = await readText(`/proc/${pid}/smaps_rollup`);
  const pss = rollup && /^Pss:\s+(\d+) kB/m.exec(rollup);
  return pss ? Number(pss[1]) * 1024 : rssBytes(pid);
};

const PAGE_BYTES = 4096;

/** A process's resident set size (bytes): shared memory counted whole; cheap to read. */
const rssBytes = async (pid: number): Promise<number> => {
  const statm = await readText(`/proc/${pid}/statm`);
  return statm ? Number(statm.split(' ')[1] ?? 0) * PAGE_BYTES : 0;
};

/** A process's children, from each of its threads' `children` file. */
const childrenOf = async (pid: number): Promise<number[]> => {
  const tasks = await readdir(`/proc/${pid}/task`).catch(() => [] as string[]);
  const lists = await Promise.all(tasks.map((t) => readText(`/proc/${pid}/task/${t}/children`)));
  return lists.flatMap((l) => (l ?? '').split(/\s+/).filter(Boolean).map(Number));
};

/** `root` and its descendants. */
export const processTree = async (root: number): Promise<number[]> => {
  const pids: number[] = [];
  const queue = [root];
  while (queue.length > 0 && pids.length < 1000) {
    const pid = queue.shift() as number;
    pids.push(pid);
    queue.push(...(await childrenOf(pid)));
  }
  return pids;
};

export interface TreeSample {
  readonly totalBytes: number;
  /** Each process: its pid, bytes and whether it is a page's renderer. */
  readonly processes: readonly { readonly pid: number; readonly bytes: number; readonly renderer: boolean }[];
}

/** The memory of the processes `pids` (PSS, or RSS with `cheap`). */
export const sampleTree = async (pids: readonly number[], cheap = false): Promise<TreeSample> => {
  const processes = await Promise.all(
    pids.map(async (pid) => {
      const [bytes, cmdline] = await Promise.all([
        cheap ? rssBytes(pid) : pssBytes(pid),
        cheap ? Promise.resolve(undefined) : readText(`/proc/${pid}/cmdline`),
      ]);
      return { pid, bytes, renderer: cmdline?.includes('--type=renderer') === true };
    }),
  );
  return { totalBytes: processes.reduce((sum, p) => sum + p.bytes, 0), processes };
};

/** One render being watched. */
export interface WatchedRender {
  /** Set when a process was killed for the budget while this render ran: why it failed, if it did. */
  overBudget(): MemoryBudgetError | undefined;
  /** The render is over: no longer watched. */
  end(): void;
}

export interface MemoryWatch {
  readonly budget: MemoryBudget;
  /**
   * Watches a render running on the browser whose process is `browserPid()`; `killBrowser` ends
   * that browser when it is itself the largest process (single-process Chromium).
   */
  watch(target: {
    readonly browserPid: () => number | undefined;
    readonly killBrowser: (reason: string) => void;
  }): WatchedRender;
  /** The highest total seen since the last call (bytes, RSS: an upper bound of PSS). */
  takePeak(): number;
}

interface Running {
  overBudget?: MemoryBudgetError;
  readonly browserPid: () => number | undefined;
  readonly killBrowser: (reason: string) => void;
}

export const createMemoryWatch = (budget: MemoryBudget): MemoryWatch => {
  const limit = memoryLimitBytes(budget);
  const running = new Set<Running>();
  let timer: NodeJS.Timeout | undefined;
  let sampling = false;
  let peak = 0;
  /** When a process was last killed for the budget: the grace before another. */
  let killedAt = Number.NEGATIVE_INFINITY;

  /** The tree's processes, found again every TREE_EVERY samples (they change when a page opens). */
  let tree: { root: number; pids: number[]; samples: number } | undefined;

  const sample = async (): Promise<void> => {
    const first = running.values().next().value;
    const pid = first?.browserPid();
    if (!first || pid === undefined) return;
    if (!tree || tree.root !== pid || tree.samples++ >= TREE_EVERY) {
      tree = { root: pid, pids: await processTree(pid), samples: 0 };
    }
    const pids = budget.includesNode ? [...tree.pids, process.pid] : tree.pids;
    // RSS first (a file of a few bytes per process); PSS, which is never more (~7 ms of CPU for
    // a warm browser's 5 processes: smaps_rollup walks V8's large mappings), only past the line.
    const cheap = await sampleTree(pids, true);
    peak = Math.max(peak, cheap.totalBytes);
    if (cheap.totalBytes <= limit) return;
    const sampled = await sampleTree(pids);
    const total = sampled.totalBytes;
    const now = performance.now();
    if (total <= limit || now - killedAt < GRACE_MS) return;
    killedAt = now;
    // The largest of Chromium's processes is the one that took the memory: a page's renderer (its
    // layout), or the print's; the browser's own only in single-process Chromium.
    const largest = sampled.processes
      .filter((p) => p.pid !== process.pid)
      .sort((a, b) => b.bytes - a.bytes)[0];
    const error = new MemoryBudgetError(total, budget.mib);
    for (const run of running) run.overBudget ??= error;
    log('WARN', 'memory-budget-exceeded', {
      mib: Math.round(total / MiB),
      budgetMiB: budget.mib,
      limitMiB: Math.round(limit / MiB),
      killedMiB: largest ? Math.round(largest.bytes / MiB) : undefined,
      renderer: largest?.renderer,
    });
    if (!largest || largest.pid === pid) {
      first.killBrowser('over its memory budget');
      return;
    }
    try {
      process.kill(largest.pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  };

  const tick = (): void => {
    if (sampling) return;
    sampling = true;
    sample()
      .catch(() => undefined)
      .finally(() => {
        sampling = false;
      });
  };

  return {
    budget,
    watch({ browserPid, killBrowser }) {
      const run: Running = { browserPid, killBrowser };
      running.add(run);
      if (!timer) {
        timer = setInterval(tick, SAMPLE_MS);
        timer.unref();
      }
      return {
        overBudget: () => run.overBudget,
        end: () => {
          running.delete(run);
          if (running.size === 0 && timer) {
            clearInterval(timer);
            timer = undefined;
          }
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
