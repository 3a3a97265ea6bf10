/**
 * Memory of a process tree from /proc (Linux): resident set sizes summed over a process and all
 * its descendants (node + Chromium's processes), sampled on a timer. Summed RSS counts pages
 * shared between Chromium's processes once per process, so it over-states the real footprint;
 * PSS (proportional set size, from smaps_rollup) splits shared pages fairly and is sampled too,
 * every 100 ms rather than 50 because the kernel walks page tables to compute it.
 */
import { readdirSync, readFileSync } from 'node:fs';

const PAGE_BYTES = 4096;
const MiB = 1024 * 1024;

const read = (path: string): string | undefined => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
};

export const procAvailable = (): boolean => read('/proc/self/stat') !== undefined;

interface ProcInfo {
  readonly pid: number;
  readonly ppid: number;
  readonly comm: string;
}

const allProcesses = (): ProcInfo[] => {
  const out: ProcInfo[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = read(`/proc/${entry}/stat`);
    if (!stat) continue;
    // pid (comm) state ppid ...: comm may contain spaces and parentheses.
    const close = stat.lastIndexOf(')');
    const comm = stat.slice(stat.indexOf('(') + 1, close);
    const ppid = Number(stat.slice(close + 2).split(' ')[1]);
    out.push({ pid: Number(entry), ppid, comm });
  }
  return out;
};

/** `root` and its descendants. */
export const processTree = (root: number): ProcInfo[] => {
  const all = allProcesses();
  const children = new Map<number, ProcInfo[]>();
  for (const p of all) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
  const self = all.find((p) => p.pid === root);
  if (!self) return [];
  const tree: ProcInfo[] = [];
  const queue = [self];
  while (queue.length > 0) {
    const p = queue.shift() as ProcInfo;
    tree.push(p);
    queue.push(...(children.get(p.pid) ?? []));
  }
  return tree;
};

const rssBytes = (pid: number): number => {
  const statm = read(`/proc/${pid}/statm`);
  return statm ? Number(statm.split(' ')[1]) * PAGE_BYTES : 0;
};

const pssBytes = (pid: number): number => {
  const rollup = read(`/proc/${pid}/smaps_rollup`);
  const match = rollup && /^Pss:\s+(\d+) kB/m.exec(rollup);
  return match ? Number(match[1]) * 1024 : 0;
};

export interface MemorySample {
  /** Summed RSS of the whole tree, MiB. */
  readonly rssMiB: number;
  /** Summed RSS of Chromium's processes only, MiB. */
  readonly chromiumRssMiB: number;
  readonly processes: number;
}

const isChromium = (comm: string): boolean => /chrom|headless/i.test(comm);

export const sampleTree = (root: number): MemorySample => {
  let rss = 0;
  let chromium = 0;
  const tree = processTree(root);
  for (const p of tree) {
    const bytes = rssBytes(p.pid);
    rss += bytes;
    if (isChromium(p.comm)) chromium += bytes;
  }
  return { rssMiB: rss / MiB, chromiumRssMiB: chromium / MiB, processes: tree.length };
};

export const pssOfTree = (root: number): number =>
  processTree(root).reduce((sum, p) => sum + pssBytes(p.pid), 0) / MiB;

export interface Peak {
  rssMiB: number;
  chromiumRssMiB: number;
  pssMiB: number;
  processes: number;
}

/**
 * Samples `root`'s tree every `intervalMs`, PSS every `pssEvery`-th sample (it costs ~3.5 ms of
 * CPU for Node + Chromium, RSS ~0.6 ms), and keeps the peak of the current window; `take()`
 * returns it and starts a new window.
 */
export const startSampler = (root: number, intervalMs = 50, pssEvery = 2) => {
  const empty = (): Peak => ({ rssMiB: 0, chromiumRssMiB: 0, pssMiB: 0, processes: 0 });
  let window = empty();
  const overall = empty();
  let tick = 0;
  const sample = () => {
    if (!procAvailable()) return;
    const s = sampleTree(root);
    const pss = tick++ % pssEvery === 0 ? pssOfTree(root) : 0;
    for (const peak of [window, overall]) {
      peak.rssMiB = Math.max(peak.rssMiB, s.rssMiB);
      peak.chromiumRssMiB = Math.max(peak.chromiumRssMiB, s.chromiumRssMiB);
      peak.pssMiB = Math.max(peak.pssMiB, pss);
      peak.processes = Math.max(peak.processes, s.processes);
    }
  };
  const timer = setInterval(sample, intervalMs);
  timer.unref();
  const round = (p: Peak): Peak => ({
    rssMiB: Math.round(p.rssMiB),
    chromiumRssMiB: Math.round(p.chromiumRssMiB),
    pssMiB: Math.round(p.pssMiB),
    processes: p.processes,
  });
  return {
    /** The peak since the last take (with one more PSS sample now), and a new window. */
    take(): Peak {
      sample();
      if (procAvailable()) window.pssMiB = Math.max(window.pssMiB, pssOfTree(root));
      const out = round(window);
      window = empty();
      return out;
    },
    overall: (): Peak => round(overall),
    stop: () => clearInterval(timer),
  };
};

/** Clock ticks per second of /proc's CPU times (USER_HZ; 100 on Linux). */
const TICK_MS = 10;

/**
 * A process's CPU time so far, ms (user + system): its own, and that of its children it reaped;
 * undefined when it is gone.
 */
const cpuOf = (pid: number): { own: number; reaped: number } | undefined => {
  const stat = read(`/proc/${pid}/stat`);
  if (!stat) return undefined;
  const f = stat
    .slice(stat.lastIndexOf(')') + 2)
    .split(' ')
    .map(Number);
  return {
    own: ((f[11] ?? 0) + (f[12] ?? 0)) * TICK_MS,
    reaped: ((f[13] ?? 0) + (f[14] ?? 0)) * TICK_MS,
  };
};

/**
 * CPU time used so far by `root` (Node) and by its descendants (Chromium's processes), ms:
 * user + system time of the live processes plus that of their children already reaped, so
 * renderer processes that ended with their context are counted in their parent.
 */
export const cpuOfTree = (root: number): { rootMs: number; descendantsMs: number } => {
  let rootMs = 0;
  let descendantsMs = 0;
  for (const p of processTree(root)) {
    const cpu = cpuOf(p.pid);
    if (!cpu) continue;
    const { own, reaped } = cpu;
    if (p.pid === root) {
      rootMs += own;
      descendantsMs += reaped;
    } else {
      descendantsMs += own + reaped;
    }
  }
  return { rootMs, descendantsMs };
};

/**
 * CPU time used so far by `root`'s tree, ms, split into Chromium's processes and the rest (Node:
 * the stack, its emulators): a figure that does not depend on what else the machine runs.
 */
export const cpuByKind = (root: number): { nodeMs: number; chromiumMs: number } => {
  let nodeMs = 0;
  let chromiumMs = 0;
  for (const p of processTree(root)) {
    const cpu = cpuOf(p.pid);
    if (!cpu) continue;
    const { own, reaped } = cpu;
    // A Chromium process's reaped children are Chromium's (its renderers); Node's are not counted
    // twice: a Chromium browser Node reaped was counted while it lived.
    if (isChromium(p.comm)) chromiumMs += own + reaped;
    else nodeMs += own;
  }
  return { nodeMs, chromiumMs };
};
