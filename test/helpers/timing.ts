/**
 * Bounds on durations, taken against a control measured in the same run (README, "Tests"): a
 * test that must judge time first times something of the same kind without the wait under test
 * (a round trip to the same server, the same engine on a smaller input), and bounds the duration
 * it judges by the wait it expects plus a slack that grows with the control. On a quiet machine
 * the slack is the test's own figure, never less; on a busy one, where the control is slow too,
 * the bound grows with it instead of failing for the machine's sake.
 *
 * Ratios of times (a render during a flood against one idle) are judged by the files themselves
 * against their own controls; those files also report the ratio (reportRatio) for the bench
 * (`npm run bench`, test/bench/ratios.ts).
 */
import { appendFileSync, readFileSync } from 'node:fs';

/** Milliseconds since `started` (performance.now()). */
export const since = (started: number): number => performance.now() - started;

/** What `fn` gives, and the milliseconds it took. */
export const timed = async <T>(fn: () => T | Promise<T>): Promise<{ value: T; ms: number }> => {
  const started = performance.now();
  const value = await fn();
  return { value, ms: since(started) };
};

/** The median of several timings of `fn` (a control less at the mercy of one slow moment). */
export const controlMs = async (fn: () => unknown, runs = 3): Promise<number> => {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) samples.push((await timed(fn)).ms);
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)] as number;
};

/** This thread's CPU time in ms (Linux: /proc/thread-self), or undefined where it cannot be read. */
const threadCpuMs = (): number | undefined => {
  try {
    const stat = readFileSync('/proc/thread-self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
};

/**
 * The machine's pace for CPU-bound work now: wall-clock milliseconds per millisecond of this
 * thread's CPU time, over a spin of about `cpuMs` (at least 1). The control for a bound on a limit
 * counted in CPU time (a templating worker's): at load 30 on 2 cores a thread gets about a
 * sixteenth of a core, and 300 ms of CPU take about 5 s. Where the thread's CPU time cannot be
 * read, the process's (its other threads idle meanwhile, or the pace comes out lower).
 */
export const cpuPace = (cpuMs = 100): number => {
  const read = (): number => threadCpuMs() ?? (process.cpuUsage().user + process.cpuUsage().system) / 1000;
  const startCpu = read();
  const startWall = performance.now();
  while (read() - startCpu < cpuMs) {
    // spins: reading the CPU time is itself CPU work
  }
  return Math.max(1, (performance.now() - startWall) / cpuMs);
};

export interface PaceBound {
  /** The wait the mechanism itself takes (a visibility timeout, a time limit); 0 for none. */
  readonly expectedMs: number;
  /** The slack on a quiet machine: the test's figure before it had a control. */
  readonly slackMs: number;
  /** The same run's control. */
  readonly controlMs: number;
  /** How many controls the slack may grow to on a busy machine. */
  readonly factor: number;
}

/** `expectedMs + max(slackMs, factor × controlMs)`, rounded up. */
export const paceBound = ({ expectedMs, slackMs, controlMs, factor }: PaceBound): number =>
  Math.ceil(expectedMs + Math.max(slackMs, factor * controlMs));

/** A label for an assertion's message: the bound and what it came from. */
export const describeBound = (ms: number, bound: PaceBound): string =>
  `${Math.round(ms)} ms, bound ${paceBound(bound)} ms = ${Math.round(bound.expectedMs)} + max(${bound.slackMs}, ${bound.factor} × control ${Math.round(bound.controlMs)} ms)`;

/**
 * A ratio of times a test judged, printed and, when the bench runs the file
 * (BENCH_RATIOS_FILE, set by test/bench/ratios.ts), written for the bench's report.
 */
export const reportRatio = (name: string, ratio: number, bound: number, detail = ''): void => {
  const line = { name, ratio: Math.round(ratio * 100) / 100, bound: Math.round(bound * 100) / 100, detail };
  console.info(`ratio ${name}: ×${line.ratio} (bound ×${line.bound})${detail ? ` ${detail}` : ''}`);
  const file = process.env.BENCH_RATIOS_FILE;
  if (file) appendFileSync(file, `${JSON.stringify(line)}\n`);
};
