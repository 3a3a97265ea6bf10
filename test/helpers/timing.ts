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
import { appendFileSync } from 'node:fs';

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
  `${Math.round(ms)} ms, bound ${paceBound(bound)} ms = ${bound.expectedMs} + max(${bound.slackMs}, ${bound.factor} × control ${Math.round(bound.controlMs)} ms)`;

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
