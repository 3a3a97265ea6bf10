/**
 * The local stack's own CPU per request, for the test suite's budget: a stack process as the
 * tests start one, a fixed mix of requests, and the CPU of the stack's Node process (and of its
 * whole process tree, Chromium included) over the mix. `npx tsx test/bench/stack-requests.ts`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { startStackProcess } from '../helpers/child-stack.js';
import { DEFAULT_PLANS, PLANS_VARIABLE } from '../../functions/settings.js';

const HZ = 100;
const cpuOf = (pid: number): number => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / HZ;
};
const treeCpu = (root: number): number => {
  const parents = new Map<number, number[]>();
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(ppid, [...(parents.get(ppid) ?? []), Number(p)]);
    } catch {}
  }
  let sum = 0;
  const stack = [root];
  while (stack.length) {
    const p = stack.pop() as number;
    try {
      sum += cpuOf(p);
    } catch {}
    stack.push(...(parents.get(p) ?? []));
  }
  return sum;
};

const api = async (path: string, o: { method?: string; token: string; body?: unknown }) => {
  const res = await fetch(`${stack.baseUrl}${path}`, {
    method: o.method ?? 'GET',
    headers: { authorization: `Bearer ${o.token}`, 'content-type': 'application/json' },
    body: o.body === undefined ? undefined : JSON.stringify(o.body),
  });
  const json = await res.json();
  if (res.status >= 300) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
  return { json };
};
const roomy = { monthlyRenders: 1_000_000, rendersPerMinute: 1_000_000 };
const stack = await startStackProcess({ [PLANS_VARIABLE]: JSON.stringify({ ...DEFAULT_PLANS, free: roomy }) }, 120_000, {
  ...(process.env.STACK_NODE_OPTIONS ? { NODE_OPTIONS: process.env.STACK_NODE_OPTIONS } : {}),
});
try {
  const token = await stack.sessionToken('bench-1');
  const t = await api('/v1/templates', {
    method: 'POST',
    token,
    body: { name: 'bench', html: '<h1>{{ title }}</h1><p>{{ body }}</p>' },
  });
  const mix = async (n: number) => {
    for (let i = 0; i < n; i++) {
      await api('/v1/me', { token });
      await api(`/v1/templates/${t.json.id}`, { token });
      await api('/v1/templates', { token });
      await api('/v1/pdf', { method: 'POST', token, body: { html: `<p>hello ${i}</p>` } });
      await api('/v1/pdf', {
        method: 'POST',
        token,
        body: { template_id: t.json.id, variables: { title: 'T', body: 'B' } },
      });
    }
  };
  await mix(10); // warm up
  const n = Number(process.env.N ?? 60);
  const node0 = cpuOf(stack.pid);
  const tree0 = treeCpu(stack.pid);
  const t0 = performance.now();
  await mix(n);
  const ms = performance.now() - t0;
  const node = cpuOf(stack.pid) - node0;
  const tree = treeCpu(stack.pid) - tree0;
  console.log(
    `${n} rounds (5 requests, 2 renders each) in ${(ms / 1000).toFixed(1)} s: stack Node ${node.toFixed(2)} s ` +
      `(${((node * 1000) / (n * 5)).toFixed(1)} ms a request), tree ${tree.toFixed(2)} s (${((tree * 1000) / (n * 5)).toFixed(1)} ms a request)`,
  );
} finally {
  await stack.stop();
}
