/**
 * The app synthesized with its bundles (esbuild for every function, the Chromium layer), once per
 * run for all the files that run them (bundle-smoke, lambda-sandbox): a bundled synth costs tens
 * of seconds of CPU. The first file to ask synthesizes into the run's directory (run-dir.ts); the
 * others wait for it, synthesize without bundling (the same constructs, so the same logical ids)
 * and read the bundled template and its assets from that directory. Outside a run with a run
 * directory, each caller synthesizes into a directory of its own.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Template } from 'aws-cdk-lib/assertions';
import { CloudAssembly } from 'aws-cdk-lib/cx-api';
import { inject } from 'vitest';
import { type Synthesized, synthServiceStack } from './cdk-synth.js';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The default configuration, bundled; its assembly directory is shared: read it, never write. */
export const synthBundled = async ({ waitMs = 280_000 } = {}): Promise<Synthesized> => {
  const runDir = inject('runDir');
  if (!runDir) {
    return synthServiceStack({ bundle: true, outdir: await mkdtemp(join(tmpdir(), 'cdk-bundled-')) });
  }
  const outdir = join(runDir, 'bundled');
  const done = join(runDir, 'bundled.done');
  const failed = join(runDir, 'bundled.failed');
  let mine = true;
  try {
    await mkdir(join(runDir, 'bundled.lock'));
  } catch {
    mine = false;
  }
  if (mine) {
    try {
      const s = synthServiceStack({ bundle: true, outdir });
      await writeFile(done, '');
      return s;
    } catch (error) {
      await writeFile(failed, String(error));
      throw error;
    }
  }
  // Meanwhile, the constructs (the bundling file's own synth blocks its process, not this one).
  const s = synthServiceStack();
  const started = Date.now();
  while (!existsSync(done)) {
    if (existsSync(failed))
      throw new Error(`the run's bundled synth failed: ${await readFile(failed, 'utf8')}`);
    if (Date.now() - started > waitMs) throw new Error(`the run's bundled synth took over ${waitMs} ms`);
    await sleep(250);
  }
  const assembly = new CloudAssembly(outdir);
  return {
    ...s,
    assembly,
    template: Template.fromJSON(assembly.getStackArtifact(s.stack.artifactId).template),
    edgeStack: undefined,
    edgeTemplate: undefined,
  };
};
