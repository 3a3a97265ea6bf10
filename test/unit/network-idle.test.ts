/**
 * The renderer's own network-idle count (functions/renderer/network-idle.ts), on a stand-in
 * DevTools session that reports requests as Chromium's does: when a page is idle depends on its
 * requests from the watch on, never on what the page did before. The same waits against real
 * Chromium, in every session state, are in test/integration/page-load-sessions.test.ts.
 */
import { EventEmitter } from 'node:events';
import type { CDPSession } from 'puppeteer-core';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { NETWORK_QUIET_MS, watchNetwork } from '../../functions/renderer/network-idle.js';

/** A DevTools session: commands are recorded and answered; events are emitted by the test. */
class Session extends EventEmitter {
  readonly sent: { method: string; params: unknown }[] = [];
  constructor(private readonly sessionId: string) {
    super();
  }
  id(): string {
    return this.sessionId;
  }
  send(method: string, params?: unknown): Promise<unknown> {
    this.sent.push({ method, params });
    return Promise.resolve({});
  }
  start(requestId: string): void {
    this.emit('Network.requestWillBeSent', { requestId });
  }
  finish(requestId: string): void {
    this.emit('Network.loadingFinished', { requestId });
  }
  fail(requestId: string): void {
    this.emit('Network.loadingFailed', { requestId });
  }
}

const asCdp = (s: Session): CDPSession => s as unknown as CDPSession;

/** Whether `promise` has settled after the timers ran to `ms` from now. */
const settledWithin = async (promise: Promise<void>, ms: number): Promise<boolean> => {
  let settled = false;
  void promise.then(() => {
    settled = true;
  });
  await vi.advanceTimersByTimeAsync(ms);
  return settled;
};

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('watchNetwork', () => {
  it('enables the Network domain without payload buffers, and attaches to out-of-process frames only', async () => {
    const page = new Session('page');
    const watch = await watchNetwork(asCdp(page), 0);
    expect(page.sent).toContainEqual({
      method: 'Network.enable',
      params: { maxTotalBufferSize: 0, maxResourceBufferSize: 0 },
    });
    expect(page.sent).toContainEqual({
      method: 'Target.setAutoAttach',
      params: expect.objectContaining({
        autoAttach: true,
        waitForDebuggerOnStart: true,
        filter: [{ type: 'iframe', exclude: false }, { exclude: true }],
      }),
    });
    watch.stop();
  });

  it('networkidle0: idle 500 ms after the wait starts when nothing is in flight, whatever came before', async () => {
    const page = new Session('page');
    // Requests the page made and finished long before: they do not count.
    const watch = await watchNetwork(asCdp(page), 0);
    page.start('old');
    page.finish('old');
    await vi.advanceTimersByTimeAsync(60_000);
    const idle = watch.idle();
    expect(await settledWithin(idle, NETWORK_QUIET_MS - 1)).toBe(false);
    expect(await settledWithin(idle, 1)).toBe(true);
    watch.stop();
  });

  it('networkidle0: waits for every request in flight, and 500 ms more after the last one ends', async () => {
    const page = new Session('page');
    const watch = await watchNetwork(asCdp(page), 0);
    page.start('image');
    const idle = watch.idle();
    expect(await settledWithin(idle, 5_000)).toBe(false);
    page.finish('image');
    // A late fetch inside the quiet window starts it again.
    await vi.advanceTimersByTimeAsync(200);
    page.start('late-fetch');
    expect(await settledWithin(idle, 1_000)).toBe(false);
    page.fail('late-fetch'); // a failed request ends as a finished one does
    expect(await settledWithin(idle, NETWORK_QUIET_MS - 1)).toBe(false);
    expect(await settledWithin(idle, 1)).toBe(true);
    watch.stop();
  });

  it('networkidle2: two requests may stay in flight, a third breaks the quiet window', async () => {
    const page = new Session('page');
    const watch = await watchNetwork(asCdp(page), 2);
    page.start('socket-1');
    page.start('socket-2');
    const idle = watch.idle();
    await vi.advanceTimersByTimeAsync(300);
    page.start('third');
    expect(await settledWithin(idle, 2_000)).toBe(false);
    page.finish('third');
    expect(await settledWithin(idle, NETWORK_QUIET_MS)).toBe(true);
    watch.stop();
  });

  it("counts an out-of-process frame's requests on its own session, and lets the frame run", async () => {
    const page = new Session('page');
    const watch = await watchNetwork(asCdp(page), 0);
    const frame = new Session('frame');
    page.emit('sessionattached', frame);
    await vi.advanceTimersByTimeAsync(0);
    expect(frame.sent.map((c) => c.method)).toEqual(['Network.enable', 'Runtime.runIfWaitingForDebugger']);
    // The same request id on two sessions is two requests.
    frame.start('1');
    page.start('1');
    page.finish('1');
    const idle = watch.idle();
    expect(await settledWithin(idle, 2_000)).toBe(false);
    frame.finish('1');
    expect(await settledWithin(idle, NETWORK_QUIET_MS)).toBe(true);
    watch.stop();
  });

  it('stops listening when stopped', async () => {
    const page = new Session('page');
    const watch = await watchNetwork(asCdp(page), 0);
    watch.stop();
    for (const event of ['Network.requestWillBeSent', 'Network.loadingFinished', 'Network.loadingFailed'])
      expect(page.listenerCount(event)).toBe(0);
    expect(page.listenerCount('sessionattached')).toBe(0);
  });
});
