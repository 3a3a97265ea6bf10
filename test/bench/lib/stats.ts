/** Latency summaries: nearest-rank percentiles over the measured samples (warm-up excluded). */
export interface Summary {
  readonly n: number;
  readonly p50: number;
  readonly p95: number;
  readonly max: number;
  readonly min: number;
  readonly mean: number;
}

export const percentile = (sorted: readonly number[], p: number): number => {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
};

const round = (n: number): number => Math.round(n * 10) / 10;

export const summarize = (samples: readonly number[]): Summary => {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    n: sorted.length,
    p50: round(percentile(sorted, 50)),
    p95: round(percentile(sorted, 95)),
    max: round(sorted.at(-1) ?? Number.NaN),
    min: round(sorted[0] ?? Number.NaN),
    mean: round(sorted.reduce((a, b) => a + b, 0) / Math.max(1, sorted.length)),
  };
};

export const ratio = (a: number, b: number): number => Math.round((a / b) * 100) / 100;
