import { defineConfig } from 'vitest/config';

/**
 * Two projects. `unit` needs no network and no Chromium (`npm run test:unit`). `integration` runs
 * against real local stacks (dynalite, s3rver, Chromium): one shared stack for the whole run,
 * started by its global setup in a process of its own (test/helpers/shared-stack.ts), which every
 * file without special settings uses (on one of its SHARED_PLANS when `free` does not
 * suit it); files that need other settings or the handlers' log lines in their own process start
 * their own. Each integration file runs in its own child process, two at a time:
 * this machine has 2 cores, and Chromium's work is most of the load.
 */
export default defineConfig({
  test: {
    pool: 'forks',
    maxWorkers: 2,
    minWorkers: 1,
    isolate: true,
    // Generous for a busy machine (a Chromium start, a CDK synth): no test judges time by these.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    teardownTimeout: 30_000,
    // Logs as locally (readable, metrics off), and only warnings and errors: a test that reads the
    // logs raises the level itself (test/integration/log-secrets.test.ts).
    env: { POWERTOOLS_DEV: 'true', POWERTOOLS_LOG_LEVEL: 'WARN' },
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          setupFiles: ['test/helpers/no-network.ts'],
          // Unit files share their worker's modules: aws-cdk-lib, cdk-nag and the stack load once
          // per worker instead of once per file, and a configuration synthesized by one CDK file
          // serves the next (test/helpers/cdk-synth.ts). Unit tests keep no state between files.
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/helpers/shared-stack.ts'],
        },
      },
    ],
  },
});
