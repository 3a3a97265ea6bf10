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
  'fetched-fonts-single', // a renderer in this process, its S3 endpoint in this process's environment
  'retention', // a stack with another retention and a stand-in renderer
  'template-bombs', // a stack process of its own, restarted when a bomb hangs it
  'two-stacks', // stacks in this process, and what they leave behind
].map((name) => `test/integration/${name}.test.ts`);

/**
 * The heavy tier (the `heavy` project): files that judge time against their own controls, or that
 * load the machine on purpose, or both. They run in `npm run test:all` (and CI), after every other
 * file, one file at a time (test/helpers/one-at-a-time.ts), each in a process of its own, so that
 * nothing else competes with their controls and they do not load the machine for one another.
 * `npm test` leaves them out: it is the fast tier, run before every commit. A file here keeps
 * every assertion it had; where it judges a ratio of times it also reports it for the bench
 * (test/helpers/timing.ts, `npm run bench`).
 */
const HEAVY = [
  // Floods, bombs and hostile pages: they load the stack on purpose and time a bystander.
  'integration/page-floods', // 40,000 console calls a second, a bystander's render within 1.5× idle
  'integration/template-bombs', // templates that run into the deadline, a bystander within its pace
  'integration/hostile-pages', // pages that hang or flood the renderer, bounded against a control
  'integration/back-pressure', // the renderer past its capacity on purpose
  'integration/batch-fairness', // one account's big batch against another's render: a ratio
  'integration/webhook-isolation', // a webhook delivery beside a 9 s and a silent receiver: a ratio
  'integration/template-parsing', // parses that block, against an idle control: a ratio
  'integration/async-large-document', // peak memory and async against sync: a ratio
  'integration/memory-limits', // a renderer's memory budget hit on purpose; a 125 s page load
  'integration/deliveries', // issue 36: a stack of its own, retries on a 1 s schedule (~15 s)
  'integration/job-queue', // issue 37: 20 four-second async renders, a batch of 200 cancelled mid-way (~75 s)
  'unit/template-parser', // a parse's longest event-loop gap against one in place: a ratio
  'unit/templating-pool-limits', // runaway templates spin a core to the time limit, timed against a control
  // Crashes, faults and signals: kill, hang and restart processes, with bounds on the waits.
  'integration/crash-recovery', // kills and restarts stacks; bounds from the settings' waits
  'integration/batch-acceptance-kill', // kills stacks mid-acceptance; the acceptance lease's bound
  'integration/faults', // a hanging DynamoDB, lost answers: bounds on the retries' time
  'integration/renderer-isolation', // a hung Chromium, the probe's deadline
  'integration/fetched-fonts-single', // three Chromium relaunches under a file-system fault (issue 42), 5-14 s
  'integration/batch-run-isolation', // runs of items in one context, a spoiled page's timeout (issue 43)
  'integration/local-stack-signals', // `npm start` under signals and stalls
  'integration/local-gateway-stall', // blocks its own event loop
  'integration/two-stacks', // two stacks in this process, then what they leave behind on the machine
  'integration/local-stack-disk-full', // mounts a small file system and fills it under a stack
  // Sessions with a history: idle pauses, killed renderers, floods, six stacks side by side.
  'integration/page-load-sessions', // every wait × page × session state (issue 32)
  'integration/page-load-long-idle', // the same after 65 s idle, on fifteen stacks
  // Whole-machine setups: a Lambda-like sandbox with cgroup limits, bundles, a browser.
  'integration/lambda-sandbox', // Lambda's sandbox (root): cgroup CPU and memory limits
  'integration/bundle-smoke', // the synthesized bundles, run as Lambda runs them
  'integration/start-bundle', // builds `npm start`'s bundle
  'integration/dashboard', // the dashboard in Chromium, driven as a user would
  'integration/dashboard-async-work', // the same, for work that finishes later
  'integration/dashboard-assets', // the starters and the Assets page in Chromium (issue 40)
  'integration/dashboard-reference', // the API reference page (Scalar's viewer) in Chromium, at two widths
  'integration/chromium-check', // `npm run chromium:check`: every fixture printed, drawn and timed, twice
  'integration/docs-site', // two builds of the documentation site (VitePress), half a minute each
  // Every example of the README and the docs, run as written in one shell: some 60 requests, a
  // stack of its own, the token and admin commands a dozen times (45 s, 20 s of CPU).
  'integration/readme-examples',
  // SaxonJS and the schematrons in the test's own process: seconds before the first check. The fast
  // tier keeps the business rules over HTTP (integration/e-invoice: the shared stack's checker).
  'integration/contract/e-invoice.saxon', // the real checker's contract, every profile's first load
  'integration/e-invoice-extended', // EXTENDED's schematron, the largest: some 10 s to load
  'integration/e-invoice-xrechnung', // KoSIT's XRechnung schematron on top of EN 16931's
  // CDK template assertions: aws-cdk-lib and a synth per file, seconds of a core each.
  'unit/cdk-consumer-fixture',
  'unit/cdk-cors',
  'unit/cdk-cost',
  'unit/cdk-dashboard',
  'unit/cdk-domain',
  'unit/cdk-edge',
  'unit/cdk-layer',
  'unit/cdk-monitoring',
  'unit/cdk-operations',
  'unit/cdk-settings',
  'unit/cdk-stack',
  'unit/cdk-table-access',
  'unit/cdk-synth-imports',
].map((name) => `test/${name}.test.ts`);

/**
 * The long hostile sweeps: the fast tier runs a sample of each (every kind of case), the full tier
 * the rest too, in the `sweeps` project (test/helpers/sweep-part.ts).
 */
const SWEEPS = ['template-injection', 'hostile-input'].map((name) => `test/integration/${name}.test.ts`);

const OWN_PROCESS_FAST = OWN_PROCESS.filter((file) => !HEAVY.includes(file));

/**
 * Five projects in two tiers. The fast tier (`npm test`, before every commit): `unit` needs no
 * network and no Chromium (`npm run test:unit`; the memory adapters' contract tests too); the
 * integration projects run against real local stacks (dynalite, s3rver, Chromium): `integration`
 * against one shared stack for the whole run, started by its global setup in a process of its own
 * (test/helpers/shared-stack.ts), or a file's own stack with other settings in a child process
 * (a bundled stack starts for about a quarter of the CPU of one loaded into the test process),
 * and the local adapters' contract tests; `integration-own` against stacks in each file's own
 * process. The full tier (`npm run test:all`, CI) adds `sweeps` after `integration` (the rest of
 * the two long hostile sweeps, SWEEPS above) and `heavy`, after all of them (HEAVY above).
 *
 * A test file's own process costs about 1.5 s of CPU before its first test (Node, the worker, the
 * service's and the SDK's modules), more than many files' tests. So `unit` and `integration` run
 * in worker threads that keep their modules from file to file (the service loads once per
 * worker); their files keep no state between files. `integration-own` and `heavy` run each file in
 * a child process of its own. Three workers per pool on 2 cores (most files wait more than they
 * work): `integration-own` (forks) and `unit` (threads) run first and side by side
 * (sequence.groupOrder; each group's pools run at once), then `integration`, then `heavy`, one
 * file at a time.
 */
export default defineConfig({
  test: {
    pool: 'forks',
    // The long files first, so that both workers stay busy to each group's end.
    sequence: { sequencer: LongestFirstSequencer },
    // Three workers on two cores: most files mostly wait (for Chromium in the stack's process,
    // for a queue's visibility timeout), so a third keeps both cores busy. As many workers at
    // least as at most: tinypool's ending of idle threads below the maximum rejects with
    // "Terminating worker thread" (vitest-dev/vitest#8564), failing the run.
    maxWorkers: 3,
    minWorkers: 3,
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
          include: ['test/unit/**/*.test.ts', 'test/contract/**/*.memory.test.ts'],
          exclude: HEAVY,
          setupFiles: ['test/helpers/no-network.ts'],
          pool: 'threads',
          isolate: false,
          // Beside integration-own (a pool of forks, so both run at once; vitest runs one
          // project after another in a non-isolated pool): its files mostly wait on timers.
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts', 'test/contract/**/*.local.test.ts'],
          exclude: [...OWN_PROCESS, ...HEAVY],
          globalSetup: ['test/helpers/shared-stack.ts'],
          pool: 'threads',
          isolate: false,
          sequence: { groupOrder: 1 },
        },
      },
      {
        // The full tier's part of the two long hostile sweeps (test/helpers/sweep-part.ts): the
        // cases the fast tier's sample leaves out, on the shared stacks, after `integration` (beside
        // it, both parts at once took the renderer past its capacity: 503 after five tries).
        extends: true,
        test: {
          name: 'sweeps',
          include: SWEEPS,
          env: { POWERTOOLS_DEV: 'true', POWERTOOLS_LOG_LEVEL: 'WARN', SWEEP_PART: 'rest' },
          globalSetup: ['test/helpers/shared-stack.ts'],
          sequence: { groupOrder: 2 },
        },
      },
      {
        extends: true,
        test: {
          name: 'integration-own',
          include: OWN_PROCESS_FAST,
          globalSetup: ['test/helpers/run-dir.ts'],
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'heavy',
          include: HEAVY,
          // The run's directory (the bundled synth that bundle-smoke and lambda-sandbox share,
          // bundled-synth.ts; the lock of one-at-a-time.ts) and the shared stack, both taken
          // with the fast tier's when the run has one (each is started once per run).
          globalSetup: ['test/helpers/run-dir.ts', 'test/helpers/shared-stack.ts'],
          setupFiles: ['test/helpers/one-at-a-time.ts'],
          sequence: { groupOrder: 3 },
        },
      },
    ],
  },
});
