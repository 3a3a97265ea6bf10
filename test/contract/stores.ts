/** What a store contract is handed: a store on its backend, made with the case's clock. */
import { testClock } from '../helpers/dynalite.js';

export type TestClock = ReturnType<typeof testClock>;

export interface StoreBackend<S, O = Record<string, never>> {
  readonly name: string;
  create(clock: TestClock, options: O): S;
}

let counter = 0;
/** An id no other case of this run uses: the real backends keep one table for a whole file. */
export const unique = (prefix: string): string => `${prefix}-${Date.now().toString(36)}-${++counter}`;

export const clockAt = (iso = '2026-11-28T10:00:00.000Z'): TestClock => testClock(iso);
