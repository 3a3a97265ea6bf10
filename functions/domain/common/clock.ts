/** ISO 8601 UTC with milliseconds, as every timestamp the API shows. */
export const isoNow = (now: Date): string => now.toISOString();
export const epochSeconds = (at: Date): number => Math.floor(at.getTime() / 1000);

/** Calendar month (UTC) of `at`, e.g. `2026-11`. */
export const monthOf = (at: Date): string => at.toISOString().slice(0, 7);

/** The fixed 60-second window (aligned to the UTC clock minute) that `at` falls in. */
export const minuteOf = (at: Date): number => Math.floor(at.getTime() / 60_000);
