/**
 * What a refused body's answer says: the limit it passed, or why it is not JSON and what to send
 * instead. The answer never quotes the body (it may hold a password), only where it broke.
 */

const sizeOf = (bytes: number): string =>
  bytes % (1024 * 1024) === 0
    ? `${bytes / (1024 * 1024)} MiB (${bytes.toLocaleString('en-US')} bytes)`
    : `${bytes.toLocaleString('en-US')} bytes`;

const SEND_LESS =
  'Send less: a saved template (template_id) instead of inline html, images by URL instead of data: URIs, or the items in several batches';

/** `bytes`, when known, is the body's size (under the limit: the request around it passed it). */
export const tooLargeMessage = (maxBytes: number, bytes?: number): string => {
  const size = bytes?.toLocaleString('en-US');
  const what =
    bytes === undefined
      ? 'The request body is'
      : bytes > maxBytes
        ? `The request body is ${size} bytes: it is`
        : `The request body is ${size} bytes: with the rest of the request it is`;
  return `${what} over the limit of ${sizeOf(maxBytes)}. ${SEND_LESS}`;
};

const SEND_JSON =
  'send the fields as one JSON object with \'Content-Type: application/json\' (curl: -d \'{"html": "…"}\', not -F or --form)';

/** `multipart/form-data; boundary=…` → `multipart/form-data`. */
const mediaType = (contentType: string | undefined): string =>
  (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';

/** Where JSON.parse stopped, as line and column, from V8's "at position N" (no text of the body). */
const whereItBroke = (text: string, error: unknown): string => {
  const position = /position (\d+)/.exec(error instanceof Error ? error.message : '')?.[1];
  if (position === undefined) return text.trim() === '' ? ': the body is empty' : '';
  const before = text.slice(0, Number(position)).split('\n');
  return ` at line ${before.length}, column ${(before.at(-1)?.length ?? 0) + 1}`;
};

/** The message of a body JSON.parse refused, by what the client said it sent. */
export const notJsonMessage = (contentType: string | undefined, text: string, error: unknown): string => {
  const type = mediaType(contentType);
  if (type === 'multipart/form-data') {
    return `The request body is multipart/form-data (a form upload); this API takes JSON: ${SEND_JSON}`;
  }
  if (type === 'application/x-www-form-urlencoded' && !/^\s*[[{"]/.test(text)) {
    return `The request body is form fields (name=value&…); this API takes JSON: ${SEND_JSON}`;
  }
  return `The request body is not valid JSON${whereItBroke(text, error)}: ${SEND_JSON}`;
};
