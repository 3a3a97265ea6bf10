/**
 * Admission control for one renderer: at most `maxConcurrent` renders run at once, at most
 * `maxQueued` wait for a turn, and any beyond are refused at once with when to try again.
 *
 * Why: every render is a browser context and a page on one Chromium. Unbounded, 200 concurrent
 * renders on a laptop ran 21-33 Chromium processes, each render slowed the others, and most
 * outlived their budget (169 of 200 answered 500, p50 6.9 s; issue 19). Bounded, the ones admitted
 * finish at their usual speed and the rest learn at once that they should come back (503
 * SERVICE_BUSY with Retry-After), with their quota unit given back.
 */

export interface AdmissionOptions {
  readonly maxConcurrent: number;
  /** @default maxConcurrent */
  readonly maxQueued?: number;
}

export type Admitted<T> =
  | { readonly admitted: true; readonly value: T }
  | { readonly admitted: false; readonly retryAfterSeconds: number };

export interface Admission {
  /** Runs `work` when a slot is free (waiting in the queue when there is room); else refuses it. */
  run<T>(work: () => Promise<T>): Promise<Admitted<T>>;
  stats(): { readonly running: number; readonly queued: number };
}

/** What a render is assumed to take before one has finished: a warm one-page render is ~0.3-1 s. */
const INITIAL_AVERAGE_MS = 1_000;
const MAX_RETRY_AFTER_SECONDS = 30;

export const createAdmission = ({
  maxConcurrent,
  maxQueued = maxConcurrent,
}: AdmissionOptions): Admission => {
  const slots = Math.max(1, maxConcurrent);
  let running = 0;
  const waiting: (() => void)[] = [];
  // A moving average of render times, for Retry-After: when the queue ahead will have drained.
  let averageMs = INITIAL_AVERAGE_MS;

  const retryAfterSeconds = (): number => {
    const rounds = 1 + waiting.length / slots;
    return Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(1, Math.ceil((averageMs * rounds) / 1000)));
  };

  const release = (startedAt: number): void => {
    averageMs = 0.8 * averageMs + 0.2 * (performance.now() - startedAt);
    const next = waiting.shift();
    if (next) next();
    else running -= 1;
  };

  return {
    async run(work) {
      if (running < slots) running += 1;
      else if (waiting.length < maxQueued) await new Promise<void>((resolve) => waiting.push(resolve));
      else return { admitted: false, retryAfterSeconds: retryAfterSeconds() };
      // The slot is this render's now (handed over by release() when it waited).
      const startedAt = performance.now();
      try {
        return { admitted: true, value: await work() };
      } finally {
        release(startedAt);
      }
    },
    stats: () => ({ running, queued: waiting.length }),
  };
};
