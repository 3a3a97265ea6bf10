/**
 * Several local stacks in one process: each has its own renderer (browser, egress proxy,
 * templating workers), emulators and DATA_DIR, so two render side by side over HTTP, each into
 * its own bucket, and stopping them leaves nothing behind that would keep a third from starting.
 */
import { rm } from 'node:fs/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { type LocalStack, startLocalStack } from '../../lib/local/stack.js';
import { createApi, createTempDataDir } from '../helpers/local-stack.js';
import { readPdf } from '../helpers/pdf.js';

const dataDirs: string[] = [];
const started: LocalStack[] = [];

const start = async (): Promise<LocalStack> => {
  const dataDir = await createTempDataDir();
  dataDirs.push(dataDir);
  const stack = await startLocalStack({ port: 0, dataDir, quiet: true });
  started.push(stack);
  return stack;
};

/** Renders `text` through `stack`'s API and answers the text of the PDF it stored. */
const renderThrough = async (stack: LocalStack, text: string): Promise<string> => {
  const token = await stack.issueToken({ sub: 'user-1', email: 'user-1@example.com' });
  const res = await createApi(stack.baseUrl)('/v1/pdf', {
    method: 'POST',
    token,
    body: { html: '<h1>{{ text }}</h1>', variables: { text } },
  });
  expect(res.status, res.text).toBe(201);
  expect(res.json.status).toBe('completed');
  const url = new URL(res.json.download_url);
  // Stored in this stack's s3rver, not the other's.
  expect(url.origin).toBe(stack.s3Endpoint);
  const pdf = await fetch(url);
  expect(pdf.status).toBe(200);
  return (await readPdf(new Uint8Array(await pdf.arrayBuffer()))).text;
};

afterAll(async () => {
  await Promise.all(started.map((s) => s.close()));
  await Promise.all(dataDirs.map((d) => rm(d, { recursive: true, force: true })));
});

describe('two local stacks in one process', () => {
  it('each renders through its own renderer, and a third starts after both stop', async () => {
    const [first, second] = await Promise.all([start(), start()]);
    expect(first.baseUrl).not.toBe(second.baseUrl);

    const [a, b] = await Promise.all([
      renderThrough(first, 'Rendered by the first stack'),
      renderThrough(second, 'Rendered by the second stack'),
    ]);
    expect(a).toContain('Rendered by the first stack');
    expect(b).toContain('Rendered by the second stack');
    // Each verifies tokens against its own issuer's keys: one stack's token is nothing to the other.
    const token = await first.issueToken({ sub: 'user-1', email: 'user-1@example.com' });
    expect((await createApi(second.baseUrl)('/v1/me', { token })).status).toBe(401);

    await Promise.all([first.close(), second.close()]);

    const third = await start();
    expect(await renderThrough(third, 'Rendered by the third stack')).toContain(
      'Rendered by the third stack',
    );
    await third.close();
  }, 120_000);
});
