import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { tracingEnabled } from '../../functions/core/tracing.js';

const run = promisify(execFile);
const ROOT = new URL('../..', import.meta.url).pathname;

/**
 * Whether loading the service's SDK clients loaded the X-Ray SDK: its context (cls-hooked) puts
 * its namespaces on `process`, and its async hook then tracks every promise of the process.
 */
const xrayLoadedWith = async (env: Record<string, string>): Promise<boolean> => {
  const script =
    "await import('./functions/adapters/dynamodb/client.ts'); await import('./functions/core/http.ts');" +
    'console.log(process.namespaces === undefined ? "no" : "yes")';
  const base = { ...process.env };
  delete base.AWS_LAMBDA_FUNCTION_NAME;
  delete base.POWERTOOLS_TRACE_ENABLED;
  const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: ROOT,
    env: { ...base, AWS_REGION: 'us-east-1', ...env },
  });
  return stdout.trim().split('\n').at(-1) === 'yes';
};

describe('tracing', () => {
  it('is on in Lambda unless POWERTOOLS_TRACE_ENABLED is false, and off outside Lambda', () => {
    expect(tracingEnabled({ AWS_LAMBDA_FUNCTION_NAME: 'api' })).toBe(true);
    expect(tracingEnabled({ AWS_LAMBDA_FUNCTION_NAME: 'api', POWERTOOLS_TRACE_ENABLED: 'true' })).toBe(true);
    expect(tracingEnabled({ AWS_LAMBDA_FUNCTION_NAME: 'api', POWERTOOLS_TRACE_ENABLED: ' False ' })).toBe(
      false,
    );
    expect(tracingEnabled({})).toBe(false);
  });

  it('loads the X-Ray SDK, and its per-promise hook, only in a process that traces', async () => {
    expect(await xrayLoadedWith({})).toBe(false);
    expect(await xrayLoadedWith({ AWS_LAMBDA_FUNCTION_NAME: 'api' })).toBe(true);
  }, 30_000);
});
