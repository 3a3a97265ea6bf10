/**
 * The run's file order: the files known to take longest start first, so that the two workers of
 * each group (vitest.config.ts) end together instead of one running a long file alone at the end
 * (in a CI run without vitest's results cache, the flood test, then 100 s long, started last of
 * its group, by file size). The other files follow in vitest's own order: the last run's
 * durations when its cache has them, else the larger files first. Files that mostly wait
 * (MOSTLY_WAITING) are spread through that order so that one of them runs at a time, beside two
 * files that work.
 */
import { basename, relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * About the seconds each file took in a whole run (the heavy tier's on 2 busy cores, load 10-14;
 * the fast tier's in a quiet `npm test`, 2026-11-28 and 29), for the files over about 5 s: only
 * their order matters. async-renders-faults mostly waits, and ran alone at its group's end when it
 * started last: it counts as the longest of its group. A file missing here only starts later than
 * it could. The heavy tier's files (vitest.config.ts) run one at a time, so there only the fast
 * tier's order counts.
 */
const KNOWN_SECONDS: Readonly<Record<string, number>> = {
  'page-floods.test.ts': 107,
  'dashboard.test.ts': 47,
  'template-injection.test.ts': 27,
  'readme-examples.test.ts': 33,
  'crash-recovery.test.ts': 32,
  'dashboard-async-work.test.ts': 32,
  'hostile-input.test.ts': 20,
  'hostile-pages.test.ts': 28,
  'template-bombs.test.ts': 27,
  'faults.test.ts': 24,
  'async-large-document.test.ts': 24,
  'renderer-isolation.test.ts': 22,
  'cdk-edge.test.ts': 22,
  'async-renders-faults.test.ts': 20,
  'local-stack-signals.test.ts': 19,
  'webhooks.test.ts': 19,
  'cdk-domain.test.ts': 18,
  'renderer.test.ts': 17,
  'start-bundle.test.ts': 16,
  'renderer-offline.test.ts': 15,
  'webhooks-sweeper.test.ts': 13,
  'lambda-sandbox.test.ts': 13,
  'templates-storage.test.ts': 12,
  'template-parsing.test.ts': 12,
  'templates.test.ts': 12,
  'dashboard-reference.test.ts': 11,
  'pdf-limits.test.ts': 11,
  'queue.local-sqs.test.ts': 11,
  'template-parser.test.ts': 10,
  'local-sqs.test.ts': 10,
  'consumer-fixture.test.ts': 10,
  'bundle-smoke.test.ts': 9,
  'local-stack.test.ts': 8,
  'foreign-templates.test.ts': 7,
  'batch-acceptance-kill.test.ts': 7,
  'pdf-render.test.ts': 7,
  'account-usage.test.ts': 6,
  'e-invoice.test.ts': 6,
  'merges.test.ts': 6,
  'pdf-storage.s3rver.test.ts': 6,
  'pdf-errors.test.ts': 5,
  'pdf-diagnostics.test.ts': 5,
  'batch-outputs.test.ts': 5,
  'clients.test.ts': 5,
  'navigation.test.ts': 5,
  'pdf-templating.test.ts': 5,
};

/**
 * Files that mostly wait (a retry schedule, a sweep, a queue's visibility timeout, a render that
 * runs to its time limit) rather than work. Taken one after another they held all three of a
 * group's workers at once, and the machine idled for some 15 s of a quiet `npm test` (vmstat, at
 * about 90% idle); each now starts where the one before should have ended (`placeWaiting`).
 */
const MOSTLY_WAITING: ReadonlySet<string> = new Set([
  'webhooks.test.ts',
  'webhooks-sweeper.test.ts',
  'queue.local-sqs.test.ts',
  'consumer-fixture.test.ts',
  'pdf-limits.test.ts',
  'foreign-templates.test.ts',
  'batch-outputs.test.ts',
  'local-sqs.test.ts',
]);

/** What a file is guessed to take when neither KNOWN_SECONDS nor vitest's last run knows it. */
const UNKNOWN_SECONDS = 1.5;

/**
 * Places each file that mostly waits where the one before it should have ended, by a simulation of
 * the working files on the other two workers (each file on the worker free first, for its guessed
 * seconds): one worker waits at a time, as far as the guesses hold, and two work. The files keep
 * their order within each kind.
 */
const placeWaiting = <T>(
  ordered: readonly T[],
  waits: (item: T) => boolean,
  seconds: (item: T) => number,
): T[] => {
  const waiting = ordered.filter(waits);
  const out: T[] = [];
  const workers: [number, number] = [0, 0];
  let waitingEnds = 0;
  for (const item of ordered.filter((i) => !waits(i))) {
    const free = workers[0] <= workers[1] ? 0 : 1;
    const now = workers[free];
    const next = waiting[0];
    if (next !== undefined && now >= waitingEnds) {
      out.push(waiting.shift() as T);
      waitingEnds = now + seconds(next);
    }
    out.push(item);
    workers[free] = now + seconds(item);
  }
  return [...out, ...waiting];
};

export default class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const known = (file: TestSpecification): number => KNOWN_SECONDS[basename(file.moduleId)] ?? 0;
    // Array.prototype.sort is stable: files of equal weight keep vitest's order.
    const longestFirst = (await super.sort(files)).sort((a, b) => known(b) - known(a));
    const seconds = (file: TestSpecification): number => {
      const last = this.ctx.cache.getFileTestResults(
        `${file.project.name}:${relative(this.ctx.config.root, file.moduleId)}`,
      );
      return KNOWN_SECONDS[basename(file.moduleId)] ?? (last ? last.duration / 1000 : UNKNOWN_SECONDS);
    };
    // Each project's files in their pool: the waiting ones placed among that project's own.
    const projects = [...new Set(longestFirst.map((file) => file.project.name))];
    return projects.flatMap((name) =>
      placeWaiting(
        longestFirst.filter((file) => file.project.name === name),
        (file) => MOSTLY_WAITING.has(basename(file.moduleId)),
        seconds,
      ),
    );
  }
}
