/**
 * The templating pool's test set-up (templating-pool and templating-pool-limits): the output limit
 * the renders take, the stand-in worker that misbehaves on request, and pools made for a file and
 * closed after it.
 */
import { afterAll } from 'vitest';
import { createTemplatingPool, type TemplatingPool } from '../../functions/renderer/templating-pool.js';

/** A render's limits: 10 MiB of output, more than any test's template makes. */
export const limits = { maxOutputBytes: 10 * 1024 * 1024 };

/** The stand-in worker (test/unit/fixtures/templating-test-worker.mjs). */
export const stub = new URL('../unit/fixtures/templating-test-worker.mjs', import.meta.url);

/** A pool maker for the calling file: each pool it makes is closed after the file's tests. */
export const useTemplatingPools = () => {
  const pools: TemplatingPool[] = [];
  afterAll(async () => {
    await Promise.all(pools.map((p) => p.close()));
  });
  return (options: Parameters<typeof createTemplatingPool>[0] = {}): TemplatingPool => {
    const created = createTemplatingPool(options);
    pools.push(created);
    return created;
  };
};
