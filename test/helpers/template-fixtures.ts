/**
 * What the template tests share: accounts with a session and an API key, templates saved through
 * the API, and html of an exact UTF-8 size that gzip cannot shrink much.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { type Json, putAccountOnPlan, type TestStack } from './local-stack.js';

export interface TestAccount {
  readonly id: string;
  readonly session: string;
  /** An API key of this account, made through POST /v1/api-keys. */
  readonly key: string;
}

/** An account on the pro plan (renders are not rate-limited away), with a session and a key. */
export const newAccount = async (local: TestStack, label = 'tpl'): Promise<TestAccount> => {
  const id = `${label}-${randomUUID()}`;
  await putAccountOnPlan(local.stack, id, 'pro');
  const session = await local.sessionToken(id);
  const res = await local.api('/v1/api-keys', { method: 'POST', token: session, body: { name: 'tests' } });
  expect(res.status, res.text).toBe(201);
  return { id, session, key: res.json.key };
};

/** Saves a template through the API and answers its record. */
export const saveTemplate = async (
  local: TestStack,
  token: string,
  body: { name?: string; html?: string; is_public?: boolean },
): Promise<Json> => {
  const res = await local.api('/v1/templates', {
    method: 'POST',
    token,
    body: { name: 'a template', html: '<p>Hello {{ who }}</p>', ...body },
  });
  expect(res.status, res.text).toBe(201);
  return res.json;
};

/** Characters of 1 to 4 UTF-8 bytes, markup and quotes among them; no `{` (Jinja) and no `-` (comments). */
const ALPHABET = [
  ...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 éüñßøΩЖ€漢字語🙂🎉<>"&\'\n\t',
];

/**
 * Exactly `bytes` bytes of UTF-8 drawn pseudo-randomly from ALPHABET (deterministic per seed), so
 * gzip saves little: about a third, far from enough to fit 1 MiB in one 400 KB item.
 */
export const noise = (bytes: number, seed = 1): string => {
  const parts: string[] = [];
  let left = bytes;
  let x = seed >>> 0 || 1;
  while (left > 0) {
    // xorshift32
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    let c = ALPHABET[x % ALPHABET.length] as string;
    if (Buffer.byteLength(c) > left) c = 'x';
    parts.push(c);
    left -= Buffer.byteLength(c);
  }
  return parts.join('');
};

/**
 * A template of exactly `bytes` bytes of UTF-8: a visible heading and closing line with variables,
 * the noise between them inside an HTML comment (Chromium parses it all and lays out none of it,
 * so the render stays quick, and the closing line shows that the whole template came through).
 */
export const templateOfSize = (bytes: number, seed = 1, label = 'Big'): string => {
  const head = `<h1>${label} {{ title }}</h1><!--`;
  const tail = `--><p>End of ${label} for {{ title }}</p>`;
  const html = head + noise(bytes - Buffer.byteLength(head + tail), seed) + tail;
  expect(Buffer.byteLength(html, 'utf8')).toBe(bytes);
  return html;
};

export const MiB = 1024 * 1024;
