/**
 * The renderer alone, in its own process, as the renderer Lambda runs it: the same render() (the
 * template executed in a templating worker, warm browser, a fresh context per render, PDF
 * streamed, PUT to a presigned URL), here PUTting to a sink on loopback that drains the body and
 * answers 200. The benchmark drives it over IPC and samples the memory of this process and its
 * Chromium.
 *
 *   parent → {type: 'run', template, options, iterations, warmup}
 *   child  → {type: 'ready'}, {type: 'progress', done}, {type: 'result', samples}, {type: 'error', message}
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readRendererConfig } from '../../functions/core/config.js';
import type { RenderRequest } from '../../functions/renderer/contract.js';
import { createInProcessRenderer } from '../../functions/renderer/in-process.js';

interface RunMessage {
  readonly type: 'run';
  readonly template: RenderRequest['template'];
  readonly options: Pick<RenderRequest, 'pdf' | 'pageLoad'>;
  readonly iterations: number;
  readonly warmup: number;
}

const send = (message: unknown): void => {
  process.send?.(message);
};

const sink = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-length': '0' });
    res.end();
  });
});
await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
const upload = {
  url: `http://127.0.0.1:${(sink.address() as AddressInfo).port}/bucket/bench.pdf`,
  headers: { 'Content-Type': 'application/pdf' },
};
// A spare session as the renderer Lambda's handler has (functions/renderer/handler.ts), unless told otherwise.
const renderer = createInProcessRenderer(readRendererConfig(), {
  spareSessions: process.argv.includes('--no-spare') ? 0 : 1,
});

const run = async (m: RunMessage): Promise<void> => {
  const samples: { wallMs: number; renderDurationMs: number; pages: number; bytes: number }[] = [];
  for (let i = 0; i < m.warmup + m.iterations; i++) {
    const started = performance.now();
    const result = await renderer.render({
      jobId: `job_bench_${i}`,
      template: m.template,
      ...m.options,
      upload,
      limits: { maxPdfBytes: 50 * 1024 * 1024, maxPages: 1000, maxHtmlBytes: 10 * 1024 * 1024 },
    });
    const wallMs = performance.now() - started;
    if (!result.ok) throw new Error(`render failed: ${result.code} ${result.message}`);
    if (i >= m.warmup) {
      samples.push({
        wallMs,
        renderDurationMs: result.renderDurationMs,
        pages: result.pageCount,
        bytes: result.fileSizeBytes,
      });
    }
    send({ type: 'progress', done: i + 1 });
  }
  send({ type: 'result', samples });
};

process.on('message', (m: RunMessage | { type: 'exit' }) => {
  if (m.type === 'exit') {
    void renderer.close().finally(() => {
      sink.close();
      process.exit(0);
    });
    return;
  }
  run(m).catch((e: unknown) => send({ type: 'error', message: (e as Error).message }));
});
send({ type: 'ready' });
