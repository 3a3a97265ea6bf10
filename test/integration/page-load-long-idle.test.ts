/**
 * Every page-load wait after the renderer was idle for longer than any timer of the service's
 * (issue 32): the egress proxy drops idle connections after 60 s, Chromium's network-idle detector
 * gives up on a quiet page after 0.5-2 s. page-load-sessions.test.ts covers the shorter states.
 *
 * Each cell (wait × page) has a stack of its own with spare sessions on, as `npm start` and the
 * renderer Lambda run: after one render, every stack sits idle for IDLE_MS at once, then each
 * renders its cell, one after another, on the spare that waited all that time. Fifteen stacks sit idle side by side
 * instead of fifteen pauses in a row.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type StackProcess, startStackProcess } from '../helpers/child-stack.js';
import { type Api, createApi } from '../helpers/local-stack.js';
import {
  KINDS,
  type Kind,
  pageLoadOf,
  pageOf,
  seesLateFetch,
  servePageRequests,
  WAITS,
  type Wait,
} from '../helpers/page-load-cells.js';
import { readPdf } from '../helpers/pdf.js';
import { useReachableHost } from '../helpers/reachable-host.js';

/** Past the egress proxy's 60 s idle timeout, the longest of the renderer's timers. */
const IDLE_MS = 65_000;

const host = useReachableHost(servePageRequests);

interface Cell {
  readonly wait: Wait;
  readonly kind: Kind;
  stack?: StackProcess;
  api?: Api;
  token?: string;
}

const cells: Cell[] = WAITS.flatMap((wait) => KINDS.map((kind) => ({ wait, kind })));

const render = async (cell: Cell, label: string) => {
  const { api, token } = cell;
  if (!api || !token) throw new Error('the cell has no stack');
  const name = `${label}-${cell.wait}-${cell.kind}`;
  return api('/v1/pdf', {
    method: 'POST',
    token,
    body: {
      html: pageOf(cell.kind, host.hostPort, name),
      variables: { cell: name },
      page_load: pageLoadOf(cell.wait),
    },
  });
};

beforeAll(async () => {
  await Promise.all(
    cells.map(async (cell) => {
      cell.stack = await startStackProcess(host.env, 240_000, {}, undefined, { rendererSpareSessions: 1 });
      cell.api = createApi(cell.stack.baseUrl);
      cell.token = await cell.stack.sessionToken();
      // One render first: the session the cell renders on is the spare opened after it.
      const warm = await render(cell, 'warm');
      expect(warm.status, warm.text).toBe(201);
    }),
  );
}, 300_000);

afterAll(async () => {
  await Promise.all(cells.map((cell) => cell.stack?.stop()));
});

describe(`every wait on every page after ${IDLE_MS / 1000} s idle`, () => {
  it('completes each cell on the spare that waited', async () => {
    await new Promise((r) => setTimeout(r, IDLE_MS));
    // One after another: each spare has waited at least IDLE_MS, and no render competes with
    // fourteen others for two cores.
    for (const cell of cells) {
      const res = await render(cell, 'idle');
      expect(res.status, `${cell.wait} × ${cell.kind}: ${res.text}`).toBe(201);
      if (cell.kind === 'late-fetch' && seesLateFetch(cell.wait)) {
        const pdf = await fetch(res.json.download_url);
        expect((await readPdf(new Uint8Array(await pdf.arrayBuffer()))).text).toContain('late: fetched');
      }
    }
  }, 180_000);
});
