/** Async renders and batches in tests: waiting for a job or a batch to end, as a client polls its Location. */
import { expect } from 'vitest';
import type { Api, Json } from './local-stack.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls GET /v1/pdf/{id} until the job ended (completed, failed or cancelled). */
export const waitForJob = async (api: Api, token: string, id: string, timeoutMs = 60_000): Promise<Json> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await api(`/v1/pdf/${id}`, { token });
    expect(res.status, res.text).toBe(200);
    if (res.json.status === 'completed' || res.json.status === 'failed' || res.json.status === 'cancelled')
      return res.json;
    if (Date.now() > deadline) throw new Error(`job ${id} still ${res.json.status} after ${timeoutMs} ms`);
    await sleep(200);
  }
};

/** Polls GET /v1/batches/{id} until the batch completed. */
export const waitForBatch = async (
  api: Api,
  token: string,
  id: string,
  timeoutMs = 120_000,
): Promise<Json> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await api(`/v1/batches/${id}`, { token });
    expect(res.status, res.text).toBe(200);
    if (res.json.status === 'completed') return res.json;
    if (Date.now() > deadline) throw new Error(`batch ${id} still processing: ${res.text}`);
    await sleep(250);
  }
};
