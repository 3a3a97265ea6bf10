/**
 * API key format (contract): `pdf_live_` + 40 characters of [A-Za-z0-9]: 34 from a CSPRNG, then a
 * 6-character base62 CRC32 of everything before it, so a mistyped or made-up key is refused
 * without a database read.
 */
import { randomInt } from 'node:crypto';
import { crc32 } from 'node:zlib';

export const API_KEY_PREFIX = 'pdf_live_';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KEY_PATTERN = /^pdf_live_[A-Za-z0-9]{40}$/;

const base62 = (value: number, width: number): string => {
  let out = '';
  let n = value;
  for (let i = 0; i < width; i++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
};

const checksum = (body: string): string => base62(crc32(body), 6);

export const looksLikeApiKey = (token: string): boolean => token.startsWith(API_KEY_PREFIX);

/** Shape and checksum only: whether the key could have been issued by us. */
export const isWellFormedApiKey = (token: string): boolean =>
  KEY_PATTERN.test(token) && checksum(token.slice(0, -6)) === token.slice(-6);

export const generateApiKey = (): string => {
  let random = '';
  for (let i = 0; i < 34; i++) random += BASE62[randomInt(62)];
  const body = `${API_KEY_PREFIX}${random}`;
  return body + checksum(body);
};

/** `prefix` as the API shows it: the key's first 16 characters. */
export const apiKeyPrefix = (key: string): string => key.slice(0, 16);
