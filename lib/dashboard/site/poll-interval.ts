/**
 * How often a page asks again about unfinished work (live.ts): often enough that a render of a
 * second or two is seen finishing, rarely enough to stay cheap. A module of its own, without the
 * DOM, so that the browser tests can read it.
 */
export const POLL_INTERVAL_MS = 2000;
