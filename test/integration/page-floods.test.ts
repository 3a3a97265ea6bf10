/**
 * A page's event floods (console calls, uncaught errors, unhandled rejections; from the page, a
 * worker or a frame) cost only their own render: over HTTP against a stack of the file's own (one
 * warm browser shared by every account, as in a warm renderer Lambda), another account's render
 * sent while the flood runs takes at most 1.5× what it takes idle, measured in the same run (times
 * how much slower a twin stack that no flood reaches got meanwhile, when other work keeps the
 * machine busy), and the render after a flood is not left its backlog. The flood's own render still
 * says, in its diagnostics, how many messages its page dropped.
 *
 * Before (issue 21, 2 cores): the other account's render took 168 → 679 ms during 50,000
 * console.log calls (over 2.5 s), 213 → 2,682 ms during 50,000 uncaught errors, 202 → 5,706 ms
 * during a worker's 50,000 console.log calls, 218 → 357 ms during a frame's. The floods keep
 * those rates, each as long as the other account's renders inside it need (issue 18).
 */
import { setTimeout } from 'node:timers/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PLANS, PLANS_VARIABLE } from '../../functions/settings.js';
import { type ApiResponse, type TestStack, useLocalStack } from '../helpers/local-stack.js';
import { pdfText } from '../helpers/template-abuse.js';
import { reportRatio } from '../helpers/timing.js';

const env = {
  [PLANS_VARIABLE]: JSON.stringify({
    ...DEFAULT_PLANS,
    free: { monthlyRenders: 1_000_000, rendersPerMinute: 1_000_000, concurrentRenders: 10 },
  }),
};

/** A stack of the file's own, so that no other file's renders share its browser while it times. */
const local = useLocalStack({ env });

/**
 * Its twin, which no flood reaches: its renders, taken in turn with the other account's (never at
 * once), show how much slower the machine itself got while the floods ran (the flood's page burns
 * CPU of its own, and another test run beside this one slows every process), and the bound grows
 * by that much. On a quiet machine the twin is as fast during a flood as before it, and the bound
 * is the issue's 1.5× idle; what the service passes on from a flood slows only the flooded stack's
 * renders.
 */
const twin = useLocalStack({ env });

/**
 * A flood's text once its page's script runs: when it started, by the wall clock this process
 * shares with the page, so that each round checks that the other account's renders ran inside it.
 */
const STARTED = 'flood started at ';

/**
 * `body` run `perBatch` times every 25 ms for `floodMs` (so that the flood is under way the whole
 * time the other account renders: checked below), then `#done` appears and the page prints.
 */
const spread = (perBatch: number, body: string, floodMs: number): string => {
  const total = perBatch * Math.ceil(floodMs / 25);
  return `let sent = 0;
    const timer = setInterval(() => {
      for (let i = 0; i < ${perBatch} && sent < ${total}; i++, sent++) { ${body} }
      if (sent >= ${total}) clearInterval(timer);
    }, 25);`;
};

/** The page's own script: says when it started, and ends the render once the flood is over. */
const main = (floodMs: number): string =>
  `document.body.append(Object.assign(document.createElement('p'), { textContent: '${STARTED}' + Date.now() }));
  setTimeout(() => document.body.append(Object.assign(document.createElement('i'), { id: 'done' })), ${floodMs + 200});`;

const inScript = (script: string, floodMs: number): string =>
  `<p>flood</p><script>${main(floodMs)}${script}</script>`;

/**
 * Each flood's page, for a flood `floodMs` long, at the rate that hurt before the caps (issue 21:
 * 50,000 calls over 2.5 s, 500 every 25 ms; 20,000 console.errors, 200). What slows another
 * account's render down is the rate the events arrive at while it renders; how long the flood goes
 * on after it only adds to the backlog (measured without the caps, a flood at these rates 1.3 s
 * long still made the other render several times slower during and after it: see issue 18).
 */
const FLOODS: Record<string, (floodMs: number) => string> = {
  'console.log calls, 20,000 a second': (ms) =>
    inScript(spread(500, "console.log('flood ' + sent, { n: sent });", ms), ms),
  'console.error calls, 8,000 a second': (ms) =>
    inScript(spread(200, "console.error('flood ' + sent);", ms), ms),
  'uncaught errors, 20,000 a second': (ms) =>
    inScript(spread(500, "setTimeout(() => { throw new Error('flood ' + sent); });", ms), ms),
  'unhandled rejections, 20,000 a second': (ms) =>
    inScript(spread(500, "Promise.reject(new Error('flood ' + sent));", ms), ms),
  "a worker's console.log and console.error calls, 40,000 a second": (ms) =>
    inScript(
      `new Worker(URL.createObjectURL(new Blob([${JSON.stringify(
        spread(500, "console.log('flood ' + sent); console.error('flood ' + sent);", ms),
      )}])));`,
      ms,
    ),
  "a frame's console.log calls, 20,000 a second": (ms) =>
    `<p>flood</p><iframe srcdoc="${`<script>${spread(500, "console.log('flood ' + sent);", ms).replace(/"/g, '&quot;')}</script>`}"></iframe><script>${main(ms)}</script>`,
  "a data: frame's console.error calls, 20,000 a second": (ms) =>
    `<p>flood</p><iframe src="data:text/html,${encodeURIComponent(
      `<script>${spread(500, "console.error('flood ' + sent);", ms)}</script>`,
    )}"></iframe><script>${main(ms)}</script>`,
};

const ORDINARY = { html: '<h1>An ordinary invoice</h1><p>One line.</p>' };

interface Timing {
  /** How long the render took. */
  readonly ms: number;
  /** When it was sent and when its answer came, by the wall clock (Date.now). */
  readonly sentAt: number;
  readonly endedAt: number;
}

const timedRender = async (stack: TestStack, token: string): Promise<Timing> => {
  const sentAt = Date.now();
  const started = performance.now();
  const res = await stack.api('/v1/pdf', { method: 'POST', token, body: ORDINARY });
  const ms = performance.now() - started;
  expect(res.status, res.text).toBe(201);
  return { ms, sentAt, endedAt: Date.now() };
};

/** `n` ordinary renders one after the other, by another account: their times. */
const otherRenders = async (token: string, n: number): Promise<Timing[]> => {
  const times: Timing[] = [];
  for (let i = 0; i < n; i++) times.push(await timedRender(local, token));
  return times;
};

/**
 * `n` renders by another account on the flooded stack, each followed by one on the twin: both
 * lists of times, in the order they ran.
 */
const inTurn = async (
  token: string,
  twinToken: string,
  n: number,
): Promise<{ other: Timing[]; twin: Timing[] }> => {
  const other: Timing[] = [];
  const twins: Timing[] = [];
  for (let i = 0; i < n; i++) {
    other.push(await timedRender(local, token));
    twins.push(await timedRender(twin, twinToken));
  }
  return { other, twin: twins };
};

const median = (samples: readonly number[]): number => {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
};

/**
 * Floods per kind, with three of the other account's renders inside each and three right after it
 * (on the same warm browser), and three idle ones before each. Timings on a shared 2-core machine
 * vary by half from one render to the next, so each figure is the median of several, taken in
 * alternation.
 */
const ROUNDS = 3;

/**
 * Rounds run again when the other account's renders did not fall inside the flood (a loaded
 * machine slowed them past it): without the caps every round misses, and the test fails.
 */
const SPARE_ROUNDS = 2;

/**
 * How long a flood goes on, from the idle renders just before it (`idleMs`, their median): the
 * other account's first render waits until the flood's page has opened and runs (600 ms, as when
 * floods lasted 2.5 s, or twice an ordinary render's whole time on a slower machine: `waitMs`), and
 * its three renders end before the flood does unless they took more than twice their idle time
 * each, which fails the test anyway. A fixed 2.5 s flood was mostly time after those renders
 * ended. Each round checks that the renders ran inside the flood.
 */
const floodTiming = (idleMs: number): { waitMs: number; floodMs: number } => {
  const waitMs = Math.round(Math.max(600, 2 * idleMs));
  // Three renders of the other account's and three of the twin's, twice their idle time each.
  return { waitMs, floodMs: Math.round(waitMs + 12 * idleMs + 300) };
};

/**
 * The renders right after a flood may pay for the flooded context's teardown (its renderer
 * process ends with the flood's page), which the service does after answering: measured with the
 * caps, 0.87-1.53× idle in CI runs and up to 1.53× with another `npm test` beside this one, so
 * 1.5× failed now and then on that alone. What this check is for, a backlog left to the next
 * render, made it seconds long (4-6 s against 0.1 s idle without the caps): 2× still fails it.
 * The renders during the flood keep the issue's 1.5×.
 */
const AFTER_BOUND = 2;

/** Floods whose drops the diagnostics count: console.error calls and uncaught errors of a document. */
const COUNTED = new Set([
  'console.error calls, 8,000 a second',
  'uncaught errors, 20,000 a second',
  'unhandled rejections, 20,000 a second',
]);

describe('a page that floods its render with events', () => {
  beforeAll(async () => {
    // The paths a flood takes, and an ordinary render's, warmed before anything is timed.
    const token = await local.sessionToken();
    const warm = await local.api('/v1/pdf', {
      method: 'POST',
      token,
      body: { html: `<script>for (let i = 0; i < 2000; i++) console.error('warm ' + i);</script>` },
    });
    expect(warm.status, warm.text).toBe(201);
    await otherRenders(token, 5);
    const twinToken = await twin.sessionToken();
    for (let i = 0; i < 5; i++) await timedRender(twin, twinToken);
  });

  it.each(Object.keys(FLOODS))(
    '%s: another account renders meanwhile within 1.5× its idle time, and the flood says what it dropped',
    async (name) => {
      const flood = FLOODS[name] as (floodMs: number) => string;
      const flooder = await local.sessionToken();
      const other = await local.sessionToken();
      const twinToken = await twin.sessionToken();
      const idle: number[] = [];
      const during: number[] = [];
      const twinIdle: number[] = [];
      const twinDuring: number[] = [];
      const after: number[] = [];
      const floods: number[] = [];
      let res: ApiResponse | undefined;
      const outside: string[] = [];
      /** Runs rounds until `rounds` of them saw their flood (SPARE_ROUNDS more tries at most). */
      const runRounds = async (rounds: number) => {
        for (let tries = 0; during.length < 3 * rounds && tries < rounds + SPARE_ROUNDS; tries++) {
          // Idle and flooded windows alternate, so that the machine's own load weighs on both alike.
          await setTimeout(500);
          const idleTurns = await inTurn(other, twinToken, 3);
          const idleNow = idleTurns.other.map((t) => t.ms);
          const { waitMs, floodMs } = floodTiming(median(idleNow));
          const flooding = local.api('/v1/pdf', {
            method: 'POST',
            token: flooder,
            body: { html: flood(floodMs), page_load: { wait_for_selector: '#done', timeout_ms: 20_000 } },
          });
          // The flood is under way (its page opened and loaded) before the other account renders.
          await setTimeout(waitMs);
          const turns = await inTurn(other, twinToken, 3);
          const inside = turns.other;
          res = await flooding;
          expect(res.status, res.text).toBe(201);
          // The next renders on the warm browser: no backlog of the flood's is left to them.
          const afterNow = (await otherRenders(other, 3)).map((t) => t.ms);
          // The other account's renders ran while the flood went on: sent after its page's script
          // started, and all answered before its last batch. Without the caps, the first of them
          // waits for the flood's whole backlog and ends seconds after the flood (measured: a 1.5 s
          // flood of console.log calls held it 4-6 s, against 0.1 s idle), in every round. On a
          // loaded machine a round can miss its flood by chance: it does not count.
          const text = await pdfText(res.json.download_url);
          const startedAt = Number(text.match(new RegExp(`${STARTED}(\\d+)`))?.[1]);
          expect(startedAt, text).toBeGreaterThan(0);
          const sentFirst = (inside[0]?.sentAt ?? 0) >= startedAt;
          const endedInside = (turns.twin.at(-1)?.endedAt ?? Number.POSITIVE_INFINITY) <= startedAt + floodMs;
          if (!(sentFirst && endedInside)) {
            outside.push(
              `the other account's renders (${inside.map((t) => Math.round(t.ms)).join(', ')} ms, the twin's ${turns.twin.map((t) => Math.round(t.ms)).join(', ')} ms, idle ${Math.round(median(idleNow))} ms) ${sentFirst ? `outlasted a ${floodMs} ms flood` : 'were sent before the flood started'}`,
            );
            continue;
          }
          idle.push(...idleNow);
          during.push(...inside.map((t) => t.ms));
          twinIdle.push(...idleTurns.twin.map((t) => t.ms));
          twinDuring.push(...turns.twin.map((t) => t.ms));
          after.push(...afterNow);
          floods.push(floodMs);
        }
        expect(during, `rounds that missed their flood:\n${outside.join('\n')}`).toHaveLength(3 * rounds);
      };
      /** How much slower the twin was during the floods than idle: 1 when it was not slower. */
      const machine = () => Math.max(1, median(twinDuring) / median(twinIdle));
      const within = () =>
        median(during) < 1.5 * machine() * median(idle) && median(after) < AFTER_BOUND * median(idle);

      await runRounds(ROUNDS);
      await setTimeout(1_000);
      idle.push(...(await otherRenders(other, 3)).map((t) => t.ms));
      // Judged once more, on three times the rounds, when the first ones are over the bound: a
      // busy machine's render times vary by half from one to the next, and with nine of each a
      // median is off by a fifth now and then. What the caps are for (several times idle, in every
      // round) stays over the bound however many rounds are run.
      const secondLook = !within();
      if (secondLook) await runRounds(3 * ROUNDS);
      const figures = [idle, during, after, twinIdle, twinDuring].map((t) => Math.round(median(t)));
      console.log(
        `${name}: another account's render idle ${figures[0]} ms, during ${figures[1]} ms, after ${figures[2]} ms; the twin's idle ${figures[3]} ms, during ${figures[4]} ms (floods of ${floods.join(', ')} ms; ${outside.length} round(s) missed their flood${secondLook ? `; judged on ${floods.length} rounds` : ''})`,
      );
      reportRatio(
        `page floods, ${name}: a render during the flood against idle`,
        median(during) / median(idle),
        1.5 * machine(),
      );
      reportRatio(
        `page floods, ${name}: a render after the flood against idle`,
        median(after) / median(idle),
        AFTER_BOUND,
      );
      expect(median(during)).toBeLessThan(1.5 * machine() * median(idle));
      expect(median(after)).toBeLessThan(AFTER_BOUND * median(idle));
      if (!res) throw new Error('no flood ran');
      if (COUNTED.has(name)) {
        expect(res.json.diagnostics.truncated).toBe(true);
        expect(res.json.diagnostics.entries).toContainEqual({
          type: 'console',
          message: expect.stringMatching(/^[\d,]+ console errors and uncaught errors were dropped: /),
          count: 1,
        });
      }
    },
  );
});
