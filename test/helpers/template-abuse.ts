/**
 * Helpers for the tests that attack templating over HTTP (template-injection, template-bombs):
 *
 * - timedApi: like createApi, but every request has a deadline (AbortSignal.timeout), and a
 *   request that gets no answer (timeout, refused connection) resolves with status 0 instead of
 *   throwing, so a hung or crashed stack is reported as a failed assertion, not a hung test;
 * - pdfText: download a job's PDF (with a deadline) and read its text;
 * - startStackProcess (from child-stack.ts): the local stack in a child process, for requests
 *   that may block the event loop serving them: the test process keeps its timers.
 */
import type { Json } from './local-stack.js';
import { readPdf } from './pdf.js';

export interface TimedOptions {
  /** @default 'GET' */
  readonly method?: string;
  readonly token?: string;
  /** An object is sent as JSON; a string as it is, with Content-Type application/json. */
  readonly body?: unknown;
  /** @default 20000 */
  readonly timeoutMs?: number;
}

export interface TimedResponse {
  /** 0 when no answer arrived (deadline passed, connection refused or reset). */
  readonly status: number;
  readonly headers: Headers | undefined;
  /** The parsed body when it is JSON, else undefined. */
  readonly json: Json;
  readonly text: string;
  /** Milliseconds from sending to the whole body read (or to giving up). */
  readonly ms: number;
  readonly timedOut: boolean;
}

export type TimedApi = (path: string, options?: TimedOptions) => Promise<TimedResponse>;

export const timedApi =
  (baseUrl: string): TimedApi =>
  async (path, { method = 'GET', token, body, timeoutMs = 20_000 } = {}) => {
    const headers: Record<string, string> = {};
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
    let payload: string | undefined;
    if (body !== undefined) {
      payload = typeof body === 'string' ? body : JSON.stringify(body);
      headers['content-type'] = 'application/json';
    }
    const started = performance.now();
    try {
      const res = await fetch(`${baseUrl}${path}`, {
        method,
        headers,
        body: payload,
        signal: AbortSignal.timeout(timeoutMs),
      });
      const text = await res.text();
      let json: Json;
      if (/json/.test(res.headers.get('content-type') ?? '') && text !== '') {
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
      }
      return {
        status: res.status,
        headers: res.headers,
        json,
        text,
        ms: performance.now() - started,
        timedOut: false,
      };
    } catch (e) {
      const timedOut = (e as Error).name === 'TimeoutError' || (e as Error).name === 'AbortError';
      return {
        status: 0,
        headers: undefined,
        json: undefined,
        text: timedOut
          ? `no answer within ${timeoutMs} ms`
          : `no answer: ${(e as Error).message} ${String((e as { cause?: unknown }).cause ?? '')}`,
        ms: performance.now() - started,
        timedOut,
      };
    }
  };

/** The text of the PDF behind a presigned download link. */
export const pdfText = async (downloadUrl: string, timeoutMs = 20_000): Promise<string> => {
  const res = await fetch(downloadUrl, { signal: AbortSignal.timeout(timeoutMs) });
  if (res.status !== 200) throw new Error(`download answered ${res.status}`);
  return (await readPdf(new Uint8Array(await res.arrayBuffer()))).text;
};

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export { type StackProcess, startStackProcess } from './child-stack.js';
