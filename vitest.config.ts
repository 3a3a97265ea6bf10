import { defineConfig } from 'vitest/config';

/**
 * Unit tests need no network; integration tests start a real local stack per file (dynalite,
 * s3rver, Chromium). Each file runs in its own child process, because a process holds one stack
 * (it owns the in-process renderer); two at a time, because this machine has 2 cores and a
 * Chromium per busy file is what it can carry.
 */
export default defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts'],
    pool: 'forks',
    maxWorkers: 2,
    minWorkers: 1,
    isolate: true,
    // Chromium-backed renders and a stack start per file; no test asserts on timing.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    teardownTimeout: 30_000,
    // Logs as locally (readable, metrics off), and only warnings and errors: a test that reads the
    // logs raises the level itself (test/integration/log-secrets.test.ts).
    env: { POWERTOOLS_DEV: 'true', POWERTOOLS_LOG_LEVEL: 'WARN' },
  },
});
