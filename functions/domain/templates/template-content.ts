/**
 * A template version's content (its html and the variables it reads) as stored and as sent:
 *
 * - Stored gzipped and cut into chunks. A DynamoDB item holds at most 400 KB, and template html
 *   may be 1 MiB of UTF-8 that does not compress (a chunk is 256 KiB, so an item stays well
 *   under the limit with its keys). The chunks are items of the table itself, so storing a large
 *   template needs no bucket and no grant beyond the table.
 * - Sent inside a Lambda response, which holds at most 6 MB: the answer body is JSON, and API
 *   Gateway's proxy result carries that body as a JSON string, so every character is escaped
 *   twice. `payloadBytes` counts exactly that, so lists can stop before they would not fit.
 */
import { promisify } from 'node:util';
import { gunzip as gunzipCallback, gzip as gzipCallback } from 'node:zlib';
import { JsonText } from '../common/json-text.js';
import type { TemplatePdfOptions } from '../renders/render-options.js';

export interface TemplateContent {
  readonly html: string;
  /** Sorted top-level names the html, header and footer read without defining them. */
  readonly variables: readonly string[];
  /** Printed in the top margin of every page; null or absent: none (as in versions saved before headers). */
  readonly header_html?: string | null;
  /** Printed in the bottom margin of every page; null or absent: none. */
  readonly footer_html?: string | null;
  /** Sample data for the variables, as sent (previews and snippets start from it); null or absent: none. */
  readonly sample_variables?: JsonText | null;
  /** The render options a render of this version takes where it gives none; null or absent: none. */
  readonly pdf_options?: TemplatePdfOptions | null;
}

/** Bytes of one chunk item's data: 256 KiB, far enough below DynamoDB's 400 KB item limit. */
export const CHUNK_BYTES = 256 * 1024;

/**
 * What one answer (a template, or a page of them) may weigh in the Lambda response: 5 MiB of the
 * 6 MB Lambda allows, leaving room for the status, headers and the result's own JSON.
 */
export const ANSWER_BUDGET_BYTES = 5 * 1024 * 1024;

/**
 * The most a template's metadata (id, owner, a name of 200 characters, timestamps...) can add to
 * its content in an answer. Content is refused at save when content + this would not fit the budget,
 * so one template always fits in an answer.
 */
export const RECORD_OVERHEAD_BYTES = 8 * 1024;

/**
 * What a string weighs escaped twice, counted without writing it twice: a template's html is up to
 * 1 MiB, and JSON.stringify(JSON.stringify(html)) took 10-20 ms of the API's thread per count.
 * `"` and `\` become `\\\"` and `\\\\` (4 bytes), \b \f \n \r \t `\\n` (3), other control
 * characters and lone surrogates `\\u00XX` (7); the rest weigh their UTF-8 bytes; the quotes
 * around it, escaped once more, 4.
 */
const stringPayloadBytes = (text: string): number => {
  let bytes = 4;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x20 && c < 0x7f) bytes += c === 0x22 || c === 0x5c ? 4 : 1;
    else if (c < 0x20) bytes += c === 8 || c === 9 || c === 10 || c === 12 || c === 13 ? 3 : 7;
    else if (c < 0x800) bytes += c === 0x7f ? 1 : 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      const next = i + 1 < length ? text.charCodeAt(i + 1) : 0;
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 7;
    } else if (c >= 0xdc00 && c <= 0xdfff) bytes += 7;
    else bytes += 3;
  }
  return bytes;
};

/** What `value` weighs in a Lambda proxy result: JSON in the body, the body a JSON string. */
export const payloadBytes = (value: unknown): number =>
  value instanceof JsonText
    ? stringPayloadBytes(value.text)
    : typeof value === 'string'
      ? stringPayloadBytes(value)
      : Buffer.byteLength(JSON.stringify(JSON.stringify(value)), 'utf8') - 2;

/** The content's share of a template answer: its html, header, footer, variables, sample and options, escaped as they travel. */
export const contentPayloadBytes = (content: TemplateContent): number =>
  payloadBytes(content.html) +
  payloadBytes(content.variables) +
  payloadBytes(content.header_html ?? null) +
  payloadBytes(content.footer_html ?? null) +
  // Counted beyond the `null` each takes in any answer (recordPayloadBytes), so records saved
  // before them weigh what they did.
  payloadBytes(content.sample_variables ?? null) -
  payloadBytes(null) +
  payloadBytes(content.pdf_options ?? null) -
  payloadBytes(null);

/** No content: a record's answer without it (what it weighs before its content is read). */
export const NO_CONTENT: TemplateContent = { html: '', variables: [], header_html: null, footer_html: null };

/**
 * The answer's weight of a template record whose content weighs `contentBytes`, from the record
 * as answered (its content fields, whatever they hold, are counted as `contentBytes`). (Records
 * saved before headers counted no `null` header and footer: 8 bytes less, well inside the
 * budget's margin.)
 */
export const recordPayloadBytes = (meta: object, contentBytes: number): number =>
  payloadBytes({
    ...meta,
    html: '',
    variables: [],
    header_html: '',
    footer_html: '',
    sample_variables: null,
    pdf_options: null,
  }) -
  3 * payloadBytes('') -
  payloadBytes([]) +
  contentBytes;

/** The weight of a JSON array of items weighing `itemBytes` each: brackets and commas. */
export const arrayPayloadBytes = (itemBytes: readonly number[]): number =>
  itemBytes.reduce((sum, b) => sum + b, 0) + 2 + Math.max(0, itemBytes.length - 1);

/**
 * zlib on libuv's threads, not the API's: compressing 1 MiB of html took 20-30 ms of the thread
 * that serves every other request (measured locally, where one process serves every account).
 */
const gzip = promisify(gzipCallback);
const gunzip = promisify(gunzipCallback);

/** Gzipped JSON, cut into chunks of at most CHUNK_BYTES (at least one). */
export const encodeContent = async (
  content: TemplateContent,
  chunkBytes = CHUNK_BYTES,
): Promise<Buffer[]> => {
  const packed = await gzip(
    JSON.stringify({
      html: content.html,
      variables: content.variables,
      // Left out when absent, so a version without them is stored as before headers existed.
      ...(typeof content.header_html === 'string' ? { header_html: content.header_html } : {}),
      ...(typeof content.footer_html === 'string' ? { footer_html: content.footer_html } : {}),
      // As text: an object would lose its key order and its numbers' spelling (json-text.ts).
      ...(content.sample_variables ? { sample_json: content.sample_variables.text } : {}),
      ...(content.pdf_options ? { pdf_options: content.pdf_options } : {}),
    }),
  );
  const chunks: Buffer[] = [];
  for (let at = 0; at < packed.length; at += chunkBytes) chunks.push(packed.subarray(at, at + chunkBytes));
  return chunks;
};

/**
 * The content back from its chunks, in order. gzip's CRC32 and length trailer make a missing,
 * reordered or truncated chunk an error here rather than wrong html.
 */
export const decodeContent = async (chunks: readonly Uint8Array[]): Promise<TemplateContent> => {
  const parsed = JSON.parse((await gunzip(Buffer.concat(chunks))).toString('utf8')) as Partial<
    Record<keyof TemplateContent | 'sample_json', unknown>
  >;
  const optional = (v: unknown): v is string | undefined => v === undefined || typeof v === 'string';
  const optionalObject = (v: unknown) =>
    v === undefined || (typeof v === 'object' && v !== null && !Array.isArray(v));
  if (
    typeof parsed.html !== 'string' ||
    !Array.isArray(parsed.variables) ||
    !optional(parsed.header_html) ||
    !optional(parsed.footer_html) ||
    !optionalObject(parsed.sample_variables) ||
    !optional(parsed.sample_json) ||
    !optionalObject(parsed.pdf_options)
  ) {
    throw new Error(
      'a stored template version is not {html, variables, header_html?, footer_html?, sample_json?, pdf_options?}',
    );
  }
  return {
    html: parsed.html,
    variables: parsed.variables as string[],
    ...(parsed.header_html !== undefined ? { header_html: parsed.header_html } : {}),
    ...(parsed.footer_html !== undefined ? { footer_html: parsed.footer_html } : {}),
    ...(typeof parsed.sample_json === 'string'
      ? { sample_variables: new JsonText(parsed.sample_json) }
      : // Versions saved before samples were kept as text: what JSON.parse kept of them.
        parsed.sample_variables !== undefined
        ? { sample_variables: new JsonText(JSON.stringify(parsed.sample_variables)) }
        : {}),
    ...(parsed.pdf_options !== undefined ? { pdf_options: parsed.pdf_options as TemplatePdfOptions } : {}),
  };
};
