/**
 * The local API Gateway keeps a kept-alive connection whose client sent a request while the
 * process was stalled. A stall is made here in-process: the event loop is blocked past the
 * keep-alive timeout right after the request is written, so the next turn of the loop finds both
 * the expired keep-alive timer and the unread request (as after a SIGSTOP that froze the process
 * mid-turn; test/integration/local-stack-signals.test.ts stalls a whole `npm start`).
 */
import { connect, type Socket } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { closeServer, createLocalHttpServer, listen } from '../../lib/local/http-server.js';

const blockFor = (ms: number): void => {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
};

const answerOf = (socket: Socket): Promise<string> =>
  new Promise((resolve) => {
    let received = '';
    const onData = (chunk: Buffer) => {
      received += chunk.toString('latin1');
      const head = received.indexOf('\r\n\r\n');
      const length = Number(/content-length: (\d+)/i.exec(received.slice(0, Math.max(0, head)))?.[1] ?? 0);
      if (head >= 0 && received.length >= head + 4 + length)
        finish(received.slice(0, received.indexOf('\r\n')));
    };
    const onClose = () => finish('closed without an answer');
    const finish = (line: string) => {
      socket.off('data', onData);
      socket.off('close', onClose);
      resolve(line);
    };
    socket.on('data', onData);
    socket.on('close', onClose);
  });

const request = 'GET /anything HTTP/1.1\r\nHost: localhost\r\nConnection: keep-alive\r\n\r\n';

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
});

it('a request written on a kept-alive connection during a stall past the keep-alive timeout is answered', async () => {
  const server = createLocalHttpServer({
    quiet: true,
    loadHandler: async () => async () => ({ statusCode: 200, body: 'ok' }),
  });
  server.keepAliveTimeout = 200;
  server.keepAliveTimeoutBuffer = 0;
  const { port } = await listen(server, 0, '127.0.0.1');
  close = () => closeServer(server, 100);
  const socket = connect(port, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));

  let answer = answerOf(socket);
  socket.write(request);
  expect(await answer).toBe('HTTP/1.1 200 OK');

  // The second request reaches the server's socket buffer, then the process stalls (blocked in
  // a callback, not waiting for I/O) for longer than the keep-alive timeout.
  answer = answerOf(socket);
  await new Promise<void>((resolve) =>
    setImmediate(() => {
      socket.write(request);
      blockFor(600);
      resolve();
    }),
  );
  expect(await answer).toBe('HTTP/1.1 200 OK');
  socket.destroy();
});
