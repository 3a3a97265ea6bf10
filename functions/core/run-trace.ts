/** TEMPORARY: a trace of batch runs' stages (RUN_TRACE_FILE), one JSON line per event. */
import { AsyncLocalStorage } from 'node:async_hooks';
import { appendFileSync } from 'node:fs';

export const traceLane = new AsyncLocalStorage<number>();

const file = process.env.RUN_TRACE_FILE;
let lines: string[] = [];
const flush = (): void => {
  if (!file || lines.length === 0) return;
  appendFileSync(file, lines.join(''));
  lines = [];
};
if (file) {
  setInterval(flush, 500).unref();
  process.on('exit', flush);
}
export const trace = (event: string, fields: Record<string, unknown> = {}): void => {
  if (!file) return;
  lines.push(`${JSON.stringify({ t: Math.round((performance.timeOrigin + performance.now()) * 10) / 10, event, lane: traceLane.getStore(), ...fields })}\n`);
};
