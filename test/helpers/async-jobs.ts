/** Async renders in tests: waiting for a job to end, as a client polls its Location. */
import { expect } from 'vitest';
import type { Api, Json } from './local-stack.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls GET /v1/pdf/{id} until the job ended (completed or failed). */
export const waitForJob = async (api: Api, token: string, id: string, timeoutMs = 60_000): Promise<Json> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await api(`/v1/pdf/${id}`, { token });
    expect(res.status, res.text).toBe(200);
    if (res.json.status === 'completed' || res.json.status === 'failed') return res.json;
    if (Date.now() > deadline) throw new Error(`job ${id} still ${res.json.status} after ${timeoutMs} ms`);
    await sleep(200);
  }
};
