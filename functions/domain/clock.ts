/** ISO 8601 UTC with milliseconds, as every timestamp the API shows. */
export const isoNow = (now: Date): string => now.toISOString();
export const epochSeconds = (at: Date): number => Math.floor(at.getTime() / 1000);
