/**
 * The run's file order: the files known to take longest start first, so that the two workers of
 * each group (vitest.config.ts) end together instead of one running a long file alone at the end
 * (in a CI run without vitest's results cache, the flood test, then 100 s long, started last of
 * its group, by file size). The other files follow in vitest's own order: the last run's
 * durations when its cache has them, else the larger files first.
 */
import { basename } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * About the seconds each file takes on 2 busy cores (a CI run's figures, less what later changes
 * saved), for the files over about 8 s: only their order matters. A file missing here only starts
 * later than it could.
 */
const KNOWN_SECONDS: Readonly<Record<string, number>> = {
  'page-floods.test.ts': 80,
  'dashboard.test.ts': 40,
  'hostile-input.test.ts': 39,
  'dashboard-async-work.test.ts': 38,
  'template-injection.test.ts': 34,
  'crash-recovery.test.ts': 25,
  'faults.test.ts': 22,
  'local-stack-signals.test.ts': 22,
  'lambda-sandbox.test.ts': 19,
  'renderer.test.ts': 18,
  'template-bombs.test.ts': 17,
  'async-large-document.test.ts': 16,
  'renderer-isolation.test.ts': 16,
  'pdf-limits.test.ts': 15,
  'hostile-pages.test.ts': 14,
  'renderer-offline.test.ts': 14,
  'templates.test.ts': 13,
  'cdk-edge.test.ts': 11,
  'templates-storage.test.ts': 11,
  'webhooks.test.ts': 10,
  'cdk-domain.test.ts': 10,
  'local-stack.test.ts': 10,
  'dashboard-reference.test.ts': 9,
  'batch-fairness.test.ts': 8,
  'local-sqs.test.ts': 8,
};

export default class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const known = (file: TestSpecification): number => KNOWN_SECONDS[basename(file.moduleId)] ?? 0;
    // Array.prototype.sort is stable: files of equal weight keep vitest's order.
    return (await super.sort(files)).sort((a, b) => known(b) - known(a));
  }
}
