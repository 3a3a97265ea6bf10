import { defineConfig } from 'vitest/config';
import LongestFirstSequencer from './test/helpers/longest-first.js';

/**
 * Integration files that need a process of their own (the `integration-own` project): they start
 * a stack in their own process (a stand-in renderer or lookup, which a stack in a child process
 * cannot take), read the handlers' log lines from this process's output, mock modules, judge how
 * the process itself behaves, or count its child processes. Every other integration file talks to
 * the run's shared stack (test/helpers/shared-stack.ts), to a stack of its own in a child process
 * (useLocalStack with plain settings, test/helpers/local-stack.ts; test/helpers/child-stack.ts),
 * or to parts it starts and stops itself, and runs in the `integration` project: the file only
 * talks HTTP to them (crash-recovery kills and restarts four, its waits holding one worker, not
 * four).
 */
const OWN_PROCESS = [
  'async-large-document', // the peak memory of a stack process of its own
  'async-renders-faults', // a stack with a faulty renderer
  'template-parsing', // a stack process of its own, timed
  'bundle-smoke', // a stack from the bundles
  'dashboard-async-work', // a stack whose renders wait for the test, and a webhook receiver
  'local-gateway-stall', // blocks its own event loop
  'local-stack', // stacks in this process, and their clean-up
  'local-stack-disk-full', // mounts a file system
  'local-stack-signals', // signals to `npm start`s of its own
  'log-secrets', // reads the handlers' log lines at DEBUG from this process's output
  'lambda-sandbox', // Lambda's sandbox, with cgroup limits
  'pdf-errors', // kills its stack's Chromium renderers, found among this process's descendants
  'pdf-storage-failure', // a stack whose storage fails
  'renderer', // mocks modules
  'renderer-isolation', // mocks modules
  'renderer-offline', // a renderer in this process, both process models
  'retention', // a stack with another retention and a stand-in renderer
  'template-bombs', // a stack process of its own, restarted when a bomb hangs it
  'two-stacks', // stacks in this process, and what they leave behind
].map((name) => `test/integration/${name}.test.ts`);

/**
 * Three projects. `unit` needs no network and no Chromium (`npm run test:unit`). The integration
 * projects run against real local stacks (dynalite, s3rver, Chromium): `integration` against one
 * shared stack for the whole run, started by its global setup in a process of its own
 * (test/helpers/shared-stack.ts), or a file's own stack with other settings in a child process
 * (a bundled stack starts for about a quarter of the CPU of one loaded into the test process);
 * `integration-own` against stacks in each file's own process.
 *
 * A test file's own process costs about 1.5 s of CPU before its first test (Node, the worker, the
 * service's and the SDK's modules), more than many files' tests. So `unit` and `integration` run
 * in worker threads that keep their modules from file to file (aws-cdk-lib and the service load
 * once per worker; a configuration one CDK file synthesized serves the next,
 * test/helpers/cdk-synth.ts); their files keep no state between files. `integration-own` runs each
 * file in a child process of its own. Two workers at a time, as this machine has 2 cores and
 * Chromium's work is most of the load: `integration-own` runs first (sequence.groupOrder), then
 * `unit`, then `integration`; run side by side, the two pools' four workers made the files that
 * judge a render's time (renderer, dashboard) fail on a busy machine.
 */
export default defineConfig({
  test: {
    pool: 'forks',
    // The long files first, so that both workers stay busy to each group's end.
    sequence: { sequencer: LongestFirstSequencer },
    maxWorkers: 2,
    minWorkers: 1,
    // Which pool isolates its files is decided here, for the whole run, not per project.
    poolOptions: { forks: { isolate: true }, threads: { isolate: false } },
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
          pool: 'threads',
          isolate: false,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          exclude: OWN_PROCESS,
          globalSetup: ['test/helpers/shared-stack.ts'],
          pool: 'threads',
          isolate: false,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: {
          name: 'integration-own',
          include: OWN_PROCESS,
          // The bundled synth that bundle-smoke and lambda-sandbox share (bundled-synth.ts).
          globalSetup: ['test/helpers/run-dir.ts'],
          sequence: { groupOrder: 0 },
        },
      },
    ],
  },
});
