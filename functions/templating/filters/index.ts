/** Jinja2 3.1's builtin filters (jinja2/filters.py), by name. */
import type { FilterFn } from '../runtime.js';
import { HTML_FILTERS } from './html.js';
import { NUMBER_FILTERS } from './numbers.js';
import { SEQUENCE_FILTERS } from './sequences.js';
import { SERIALIZE_FILTERS } from './serialize.js';
import { STRING_FILTERS } from './strings.js';

export const FILTERS: ReadonlyMap<string, FilterFn> = new Map([
  ...HTML_FILTERS,
  ...NUMBER_FILTERS,
  ...SEQUENCE_FILTERS,
  ...SERIALIZE_FILTERS,
  ...STRING_FILTERS,
]);
