/**
 * What a laptop does to `npm start` (issue 19, part 6): Ctrl-C during renders, SIGTERM to npm
 * alone, a stall (SIGSTOP/SIGCONT) across the keep-alive timeout, and a body near API Gateway's
 * limits. `npm start` runs as a user runs it, in a process group of its own (test/helpers/npm-start.ts).
 */
import { connect, type Socket } from 'node:net';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { renderTemplate } from '../../functions/templating/index.js';
import { type NpmStart, npmStart, signalGroup } from '../helpers/npm-start.js';
import { sleep, timedApi } from '../helpers/template-abuse.js';
import { describeBound, type PaceBound, paceBound } from '../helpers/timing.js';

// Each render waits for an element its page adds after 1.5 s: in flight for at least that long.
const slowPage = {
  html: '<p>slow</p><script>setTimeout(() => { const p = document.createElement("p"); p.id = "done"; document.body.append(p); }, 1500)</script>',
  page_load: { wait_for_selector: '#done', timeout_ms: 20_000 },
};

/** This thread's CPU time in ms. */
const cpuMs = (): number => {
  const { user, system } = process.threadCpuUsage();
  return (user + system) / 1000;
};

/**
 * A template that busies the engine for about `targetMs` of CPU time (measured here, with the same
 * engine the stack's templating worker runs), and writes nothing.
 */
const busyTemplate = (targetMs: number): string => {
  const template = (n: number) =>
    `{% for i in range(${n}) %}{% for j in range(1000) %}{% endfor %}{% endfor %}`;
  const probe = 1_000;
  renderTemplate(template(probe), {}, { deadline: Date.now() + 60_000 }); // warm-up (JIT)
  const started = cpuMs();
  renderTemplate(template(probe), {}, { deadline: Date.now() + 60_000 });
  const perRound = Math.max(0.001, (cpuMs() - started) / probe);
  return template(Math.min(100_000, Math.max(1, Math.round(targetMs / perRound))));
};

const groupAlive = (pid: number): boolean => {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
};

const waitUntil = async (check: () => boolean, timeoutMs: number): Promise<boolean> => {
  const until = performance.now() + timeoutMs;
  while (performance.now() < until) {
    if (check()) return true;
    await sleep(50);
  }
  return check();
};

/** One HTTP/1.1 request written on `socket` by hand, and the status line of its answer. */
const exchange = (socket: Socket, path: string, timeoutMs: number): Promise<string> =>
  new Promise((resolve, reject) => {
    let received = '';
    const onData = (chunk: Buffer) => {
      received += chunk.toString('latin1');
      const head = received.indexOf('\r\n\r\n');
      if (head < 0) return;
      const length = Number(/content-length: (\d+)/i.exec(received.slice(0, head))?.[1] ?? 0);
      if (received.length >= head + 4 + length)
        done(() => resolve(received.slice(0, received.indexOf('\r\n'))));
    };
    const onEnd = () => done(() => reject(new Error(`the connection closed without an answer: ${received}`)));
    const timer = setTimeout(() => done(() => reject(new Error('no answer in time'))), timeoutMs);
    const done = (then: () => void) => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('close', onEnd);
      socket.off('error', onEnd);
      then();
    };
    socket.on('data', onData);
    socket.on('close', onEnd);
    socket.on('error', onEnd);
    socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: keep-alive\r\n\r\n`);
  });

describe('npm start under signals and stalls', () => {
  let stack: NpmStart | undefined;
  afterEach(async () => {
    await stack?.kill();
    stack = undefined;
  });
  /**
   * A stack for one of the tests that run side by side (it.concurrent below): each stalls, or
   * loads, only its own stack, and they mostly wait (a stall of seconds), so together they take
   * about as long as the longest. The signal tests before them run alone: they judge an exit's time.
   */
  const ownStacks: NpmStart[] = [];
  const ownStack = async (): Promise<NpmStart> => {
    const own = await npmStart();
    ownStacks.push(own);
    return own;
  };
  afterAll(async () => {
    await Promise.all(ownStacks.map((own) => own.kill()));
  });

  it('Ctrl-C during renders: every render in flight answers 201, then it exits 0 within 2 s', async () => {
    // Four renders of one account at once: a plan that runs them all (the free plan runs 2).
    stack = await npmStart({
      env: {
        PLANS: JSON.stringify({
          free: { monthlyRenders: 100, rendersPerMinute: 100, concurrentRenders: 10 },
        }),
      },
    });
    const api = timedApi(stack.baseUrl);
    const token = await stack.sessionToken();
    const warm = await api('/v1/pdf', {
      method: 'POST',
      token,
      body: { html: '<p>warm</p>' },
      timeoutMs: 60_000,
    });
    expect(warm.status, warm.text).toBe(201);
    // The control: a warm render's time, the pace of this stack on this machine now.
    const control = await api('/v1/pdf', { method: 'POST', token, body: { html: '<p>control</p>' } });
    expect(control.status, control.text).toBe(201);

    const answeredAt: number[] = [];
    const renders = Array.from({ length: 4 }, () =>
      api('/v1/pdf', { method: 'POST', token, body: slowPage, timeoutMs: 60_000 }).then((r) => {
        answeredAt.push(performance.now());
        return r;
      }),
    );
    // The requests are in (each waits 1.5 s in its page) before Ctrl-C, which the terminal sends
    // to the whole group (npm forwards it to the stack once more).
    await sleep(800);
    signalGroup(stack.pid, 'SIGINT');
    const answers = await Promise.all(renders);
    for (const a of answers) expect(a.status, a.text).toBe(201);
    const exit = await Promise.race([stack.exited, sleep(15_000).then(() => undefined)]);
    expect(exit, stack.output()).toBeDefined();
    const lastAnswer = Math.max(...answeredAt);
    const exitMs = (exit?.at ?? 0) - lastAnswer;
    console.info(`Ctrl-C: exited ${Math.round(exitMs)} ms after the last answer`);
    expect(exit?.code, stack.output()).toBe(0);
    const bound: PaceBound = { expectedMs: 0, slackMs: 2_000, controlMs: control.ms, factor: 5 };
    expect(exitMs, describeBound(exitMs, bound)).toBeLessThan(paceBound(bound));
    expect(await waitUntil(() => !groupAlive(stack?.pid ?? 0), 5_000)).toBe(true);
  });

  it('SIGTERM to npm alone stops the stack, Chromium included', async () => {
    stack = await npmStart();
    const api = timedApi(stack.baseUrl);
    const token = await stack.sessionToken();
    expect(
      (await api('/v1/pdf', { method: 'POST', token, body: { html: '<p>x</p>' }, timeoutMs: 60_000 })).status,
    ).toBe(201);
    process.kill(stack.pid, 'SIGTERM');
    const exit = await Promise.race([stack.exited, sleep(15_000).then(() => undefined)]);
    expect(exit, stack.output()).toBeDefined();
    // Nothing of the stack is left serving (or holding DATA_DIR's lock) as an orphan.
    expect(await waitUntil(() => !groupAlive(stack?.pid ?? 0), 10_000)).toBe(true);
    expect(stack.output()).toContain('SIGTERM');
  });

  it.concurrent('a request sent on a kept-alive connection during a stall longer than the keep-alive timeout is answered', async () => {
    const stack = await ownStack();
    const url = new URL(stack.baseUrl);
    const socket = connect(Number(url.port), url.hostname);
    await new Promise((resolve) => socket.once('connect', resolve));
    try {
      expect(await exchange(socket, '/v1/me', 30_000)).toMatch(/^HTTP\/1\.1 401/);
      signalGroup(stack.pid, 'SIGSTOP');
      try {
        // node:http's keep-alive timeout is 5 s (plus a 1 s buffer): the stall outlasts it.
        await sleep(7_500);
        const answer = exchange(socket, '/v1/me', 30_000);
        await sleep(300);
        signalGroup(stack.pid, 'SIGCONT');
        expect(await answer).toMatch(/^HTTP\/1\.1 401/);
      } finally {
        signalGroup(stack.pid, 'SIGCONT');
      }
    } finally {
      socket.destroy();
    }
  });

  it.concurrent('a stall during templating is not blamed on the template: the limit is CPU time', async () => {
    const stack = await ownStack();
    const api = timedApi(stack.baseUrl);
    const token = await stack.sessionToken();
    const plain = await api('/v1/pdf', {
      method: 'POST',
      token,
      body: { html: '<p>invoice</p>' },
      timeoutMs: 60_000,
    });
    expect(plain.status, plain.text).toBe(201);
    const html = `<p>invoice</p>${busyTemplate(800)}`;
    const control = await api('/v1/pdf', { method: 'POST', token, body: { html }, timeoutMs: 60_000 });
    expect(control.status, control.text).toBe(201);
    console.info(`templated render ${Math.round(control.ms)} ms, plain ${Math.round(plain.ms)} ms`);

    const answer = api('/v1/pdf', { method: 'POST', token, body: { html }, timeoutMs: 60_000 });
    // Templating runs for about 800 ms of CPU once the request is in: stall it midway, well past
    // the 2,000 ms limit (a laptop's lid closed mid-render).
    await sleep(500);
    signalGroup(stack.pid, 'SIGSTOP');
    try {
      await sleep(3_000);
    } finally {
      signalGroup(stack.pid, 'SIGCONT');
    }
    const stalled = await answer;
    const templatingLog = stack
      .output()
      .split('\n')
      .filter((line) => /templating|DBG/.test(line))
      .join('\n');
    expect(stalled.status, `${stalled.text}\n${templatingLog}`).toBe(201);
  });

  it.concurrent('a 5 MiB html of table markup in a body under 6 MiB renders', async () => {
    const stack = await ownStack();
    const api = timedApi(stack.baseUrl);
    const token = await stack.sessionToken();
    // Rows past the first page are hidden: Chromium parses all 5 MiB, the PDF stays one page.
    const head = '<style>tr.h{display:none}td{border:1px solid #999}</style><table>';
    const row = (i: number) =>
      `<tr class="${i < 40 ? 'v' : 'h'}"><td class="n">${i}</td><td class="t">item ${i}</td></tr>`;
    const parts: string[] = [head];
    let size = head.length + '</table>'.length;
    for (let i = 0; ; i++) {
      const r = row(i);
      if (size + r.length > 5 * 1024 * 1024) break;
      parts.push(r);
      size += r.length;
    }
    parts.push('</table>');
    const html = parts.join('');
    const body = JSON.stringify({ html, page_load: { timeout_ms: 60_000 } });
    expect(Buffer.byteLength(html)).toBeGreaterThan(5 * 1024 * 1024 - 100);
    expect(Buffer.byteLength(body)).toBeLessThan(6 * 1024 * 1024);
    const started = performance.now();
    const answer = await api('/v1/pdf', { method: 'POST', token, body, timeoutMs: 120_000 });
    console.info(`5 MiB table markup: ${answer.status} in ${Math.round(performance.now() - started)} ms`);
    expect(answer.status, answer.text).toBe(201);
  });
});
