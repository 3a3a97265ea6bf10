/**
 * A render's diagnostics (the job's `diagnostics`): what happened inside its page that the caller
 * may want to know (console errors, uncaught errors, resources that were blocked or failed, text
 * no font could draw), recorded by the renderer and stored with the job.
 *
 * Capped, because a page decides how much it logs: at most MAX_DIAGNOSTIC_ENTRIES distinct
 * entries and MAX_DIAGNOSTICS_BYTES as JSON, the same entry again only counts (`count`), and every
 * text and URL is cut to a bound. So a job item stays far below DynamoDB's 400 KB, and a page of
 * 100 jobs (1.6 MiB of diagnostics at most, 3.2 MiB if every character needs escaping twice)
 * stays inside the 5 MiB the answers keep to. Control characters are replaced: they only cost
 * escapes, and text from a page is shown to its own author, never to another account.
 */

/** What a render's page did that the caller may want to know (the job's `diagnostics`). */
export type DiagnosticType = 'console' | 'page_error' | 'resource' | 'missing_glyph' | 'unsafe_link';

export interface DiagnosticEntry {
  readonly type: DiagnosticType;
  /**
   * console, page_error: the text. resource: why it did not load (`blocked: not a public http(s) address`,
   * `failed: net::ERR_NAME_NOT_RESOLVED`, `failed: HTTP 404`, `pending: still loading at the deadline`).
   * missing_glyph: the characters no font could draw. unsafe_link: the page the link was removed from.
   */
  readonly message: string;
  /** resource: the URL; unsafe_link: the link's target (both cut when long). */
  readonly url?: string;
  /** How many times the same entry happened. */
  readonly count: number;
}

export interface Diagnostics {
  readonly entries: readonly DiagnosticEntry[];
  /** Entries were left out to keep within the caps (50 entries, 16 KiB as JSON). */
  readonly truncated: boolean;
}

export const MAX_DIAGNOSTIC_ENTRIES = 50;
export const MAX_DIAGNOSTICS_BYTES = 16 * 1024;
export const MAX_DIAGNOSTIC_MESSAGE_CHARACTERS = 500;
export const MAX_DIAGNOSTIC_URL_CHARACTERS = 300;
/** Counts stop here: room for their digits is reserved when an entry is added. */
const MAX_COUNT = 999_999_999;

export const DIAGNOSTIC_TYPES = [
  'console',
  'page_error',
  'resource',
  'missing_glyph',
  'unsafe_link',
] as const satisfies readonly DiagnosticType[];

const UNSAFE = /[\p{Cs}\p{Cc}]/u;

/** Where the first `count` code points of `text` end (its length when it has no more). */
const endOfCodePoints = (text: string, count: number): number => {
  if (text.length <= count) return text.length;
  let i = 0;
  for (let n = 0; n < count && i < text.length; n++) {
    const unit = text.charCodeAt(i);
    i += unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length ? 2 : 1;
  }
  return i;
};

/** Cuts `text` to `max` code points, marking the cut; control characters and lone surrogates replaced. */
export const clip = (text: string, max: number): string => {
  // A page may log megabytes, and the same line thousands of times (each one clipped to find its
  // entry): only the start is ever looked at, and most text has nothing to replace.
  const start = text.length > max * 2 + 2 ? text.slice(0, max * 2 + 2) : text;
  const clean = UNSAFE.test(start) ? start.replace(/\p{Cs}/gu, '\uFFFD').replace(/\p{Cc}+/gu, ' ') : start;
  // No lone surrogate is left, so a pair is never cut apart.
  const end = endOfCodePoints(clean, max);
  return end < clean.length || start.length < text.length ? `${clean.slice(0, end)}…` : clean;
};

const EMPTY_BYTES = Buffer.byteLength(JSON.stringify({ entries: [], truncated: false }));

interface Counted {
  readonly type: DiagnosticType;
  readonly message: string;
  readonly url?: string;
  count: number;
}

/**
 * Room kept for one closing entry (`close`, the renderer's summary of what a page's caps
 * dropped): it says most when the entries are full, so a flood of distinct ones must not take it.
 */
const CLOSING_ENTRY_BYTES = 300;

/** Collects one render's entries within the caps; `result()` freezes them. */
export class DiagnosticsRecorder {
  readonly #entries = new Map<string, Counted>();
  #bytes = EMPTY_BYTES + 1; // "truncated": true is a byte longer than false
  #truncated = false;
  #closed = false;
  /** Entries and bytes kept for the closing entry until it is added. */
  #reservedEntries: number;
  #reservedBytes: number;

  /** @param options.closingEntry keep room for one entry added last by `close` */
  constructor({ closingEntry = false }: { readonly closingEntry?: boolean } = {}) {
    this.#reservedEntries = closingEntry ? 1 : 0;
    this.#reservedBytes = closingEntry ? CLOSING_ENTRY_BYTES : 0;
  }

  /** The last entry, in the room kept for it (a message of ASCII text under CLOSING_ENTRY_BYTES). */
  close(type: DiagnosticType, message: string): void {
    this.#reservedEntries = 0;
    this.#reservedBytes = 0;
    this.add(type, message);
  }

  add(type: DiagnosticType, message: string, url?: string): void {
    if (this.#closed) return;
    const entry: Counted = {
      type,
      message: clip(message, MAX_DIAGNOSTIC_MESSAGE_CHARACTERS),
      ...(url !== undefined ? { url: clip(url, MAX_DIAGNOSTIC_URL_CHARACTERS) } : {}),
      count: 1,
    };
    const key = JSON.stringify([entry.type, entry.message, entry.url ?? null]);
    const seen = this.#entries.get(key);
    if (seen) {
      seen.count = Math.min(seen.count + 1, MAX_COUNT);
      return;
    }
    // The entry as JSON with the widest count it can reach, and the comma before it.
    const bytes = Buffer.byteLength(JSON.stringify({ ...entry, count: MAX_COUNT })) + 1;
    if (
      this.#entries.size + this.#reservedEntries >= MAX_DIAGNOSTIC_ENTRIES ||
      this.#bytes + this.#reservedBytes + bytes > MAX_DIAGNOSTICS_BYTES
    ) {
      this.#truncated = true;
      return;
    }
    this.#bytes += bytes;
    this.#entries.set(key, entry);
  }

  /** Marks the diagnostics as incomplete (something could not be checked or recorded). */
  truncate(): void {
    if (!this.#closed) this.#truncated = true;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The entries so far; nothing is added afterwards. */
  result(): Diagnostics {
    this.#closed = true;
    const entries: DiagnosticEntry[] = [...this.#entries.values()].map((e) => ({ ...e }));
    return { entries, truncated: this.#truncated };
  }
}
