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
   * console, page_error: the text. resource: why it did not load (`blocked: private address`,
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

/** Cuts `text` to `max` code points, marking the cut; control characters and lone surrogates replaced. */
export const clip = (text: string, max: number): string => {
  // A page may log megabytes: only the start is ever looked at.
  const start = text.length > max * 2 + 2 ? text.slice(0, max * 2 + 2) : text;
  const clean = start.replace(/\p{Cs}/gu, '\uFFFD').replace(/\p{Cc}+/gu, ' ');
  const points = [...clean];
  return points.length > max || start.length < text.length ? `${points.slice(0, max).join('')}…` : clean;
};

const EMPTY_BYTES = Buffer.byteLength(JSON.stringify({ entries: [], truncated: false }));

interface Counted {
  readonly type: DiagnosticType;
  readonly message: string;
  readonly url?: string;
  count: number;
}

/** Collects one render's entries within the caps; `result()` freezes them. */
export class DiagnosticsRecorder {
  readonly #entries = new Map<string, Counted>();
  #bytes = EMPTY_BYTES + 1; // "truncated": true is a byte longer than false
  #truncated = false;
  #closed = false;

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
    if (this.#entries.size >= MAX_DIAGNOSTIC_ENTRIES || this.#bytes + bytes > MAX_DIAGNOSTICS_BYTES) {
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
