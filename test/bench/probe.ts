/**
 * Preloaded into the service process by the benchmark (service.ts, built to JavaScript: `node --import probe.mjs
 * bin/start.mjs`): times each API request and the DynamoDB and S3 calls made on its behalf, from
 * Node's diagnostics channels, without touching the service's code. Reports to the benchmark over
 * the IPC channel when asked ({type: 'probe:take'} → {type: 'probe:traces', traces}).
 *
 * Attribution: when the API server starts a request, the probe enters an AsyncLocalStorage store
 * for it; the handler's async work, including the AWS SDK's HTTP requests and the renderer's
 * fetch PUT, inherits it.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { subscribe } from 'node:diagnostics_channel';
import type { ClientRequest, IncomingMessage, Server } from 'node:http';

interface Call {
  readonly kind: 'dynamodb' | 's3';
  readonly op: string;
  readonly start: number;
  end: number;
}

interface Trace {
  readonly start: number;
  end: number;
  status: number;
  readonly calls: Call[];
}

const apiPort = Number(process.env.PORT);
const als = new AsyncLocalStorage<Trace>();
let done: Trace[] = [];
const open = new WeakMap<object, Trace>();
const calls = new WeakMap<object, Call>();

subscribe('http.server.request.start', (message) => {
  const { request, server } = message as { request: IncomingMessage; server: Server };
  const address = server.address();
  if (typeof address !== 'object' || address?.port !== apiPort) return;
  const trace: Trace = { start: performance.now(), end: 0, status: 0, calls: [] };
  open.set(request, trace);
  als.enterWith(trace);
});

subscribe('http.server.response.finish', (message) => {
  const { request, response } = message as { request: IncomingMessage; response: { statusCode: number } };
  const trace = open.get(request);
  if (!trace) return;
  trace.end = performance.now();
  trace.status = response.statusCode;
  done.push(trace);
});

const opOf = (request: ClientRequest): { kind: Call['kind']; op: string } => {
  const target = request.getHeader('x-amz-target');
  if (typeof target === 'string') return { kind: 'dynamodb', op: target.split('.').pop() ?? target };
  return { kind: 's3', op: request.method };
};

subscribe('http.client.request.start', (message) => {
  const { request } = message as { request: ClientRequest };
  const trace = als.getStore();
  if (!trace) return;
  const call: Call = { ...opOf(request), start: performance.now(), end: 0 };
  calls.set(request, call);
  trace.calls.push(call);
});

subscribe('http.client.response.finish', (message) => {
  const { request } = message as { request: ClientRequest };
  const call = calls.get(request);
  if (call) call.end = performance.now();
});

// fetch (undici): the renderer's presigned PUT.
subscribe('undici:request:create', (message) => {
  const { request } = message as { request: { method: string } };
  const trace = als.getStore();
  if (!trace) return;
  const call: Call = { kind: 's3', op: `fetch ${request.method}`, start: performance.now(), end: 0 };
  calls.set(request, call);
  trace.calls.push(call);
});
subscribe('undici:request:headers', (message) => {
  const { request } = message as { request: object };
  const call = calls.get(request);
  if (call) call.end = performance.now();
});

process.on('message', (message: { type?: string }) => {
  if (message?.type !== 'probe:take') return;
  const traces = done.map((t) => ({
    ms: t.end - t.start,
    status: t.status,
    calls: t.calls.map((c) => ({
      kind: c.kind,
      op: c.op,
      at: c.start - t.start,
      ms: c.end ? c.end - c.start : -1,
    })),
  }));
  done = [];
  process.send?.({ type: 'probe:traces', traces });
});
