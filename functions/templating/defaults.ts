/** Jinja2 3.1's default globals (jinja2/defaults.py): range, dict, lipsum, cycler, joiner, namespace. */
import { assetGlobal } from './assets.js';
import { truthy } from './protocols.js';
import { bind, type RenderState } from './runtime.js';
import { pyCapitalize } from './str-functions.js';
import {
  escapeString,
  isInt,
  Markup,
  makeRange,
  num,
  PyCallable,
  PyDict,
  PyError,
  PyObject,
  str,
  typeError,
  typeName,
  Undefined,
  type Value,
  valueError,
} from './values.js';

const lipsumWords =
  'lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua'.split(
    ' ',
  );

// --- globals ----------------------------------------------------------------------------------

/** Jinja2's sandbox caps range() at 100,000 items; so do we. */
const MAX_RANGE = 100_000;

export const GLOBALS = (state: RenderState): Map<string, Value> =>
  new Map<string, Value>([
    // The service's own (templating/assets.ts): an account asset's URL.
    ['asset', assetGlobal()],
    [
      'range',
      new PyCallable('range', (args, kwargs) => {
        if (kwargs.size) throw typeError('range() takes no keyword arguments');
        if (!args.length || args.length > 3)
          throw typeError(`range expected 1 to 3 arguments, got ${args.length}`);
        for (const x of args) {
          if (x instanceof Undefined) x.fail();
          if (!isInt(x)) throw typeError(`'${typeName(x)}' object cannot be interpreted as an integer`);
        }
        const [start, stop, step] =
          args.length === 1
            ? [0, num(args[0] as Value), 1]
            : [num(args[0] as Value), num(args[1] as Value), args[2] === undefined ? 1 : num(args[2])];
        if (step === 0) throw valueError('range() arg 3 must not be zero');
        const n = Math.max(0, Math.ceil((stop - start) / step));
        if (n > MAX_RANGE)
          throw new PyError('OverflowError', `range() is limited to ${MAX_RANGE} items, got ${n}`);
        state.guardList(n);
        return makeRange(start, stop, step);
      }),
    ],
    [
      'dict',
      new PyCallable('dict', (args, kwargs) => {
        const d = new PyDict();
        if (args[0] instanceof PyDict) for (const [key, v] of args[0].entries()) d.set(key, v);
        for (const [key, v] of kwargs) d.set(key, v);
        return d;
      }),
    ],
    [
      'lipsum',
      new PyCallable('lipsum', (args, kwargs) => {
        const [n, html, min, max] = bind(
          'lipsum',
          ['n', 'html', 'min', 'max'],
          [5, true, 20, 100],
          args,
          kwargs,
        );
        const paragraphs: string[] = [];
        for (let p = 0; p < num(n as Value); p++) {
          const count =
            num(min as Value) + Math.floor(Math.random() * (num(max as Value) - num(min as Value)));
          const words = Array.from(
            { length: count },
            (_, i) => lipsumWords[(i + p) % lipsumWords.length] as string,
          );
          const text = `${pyCapitalize(words.join(' '))}.`;
          paragraphs.push(text);
        }
        if (!truthy(html as Value)) return paragraphs.join('\n\n');
        return new Markup(paragraphs.map((t) => `<p>${escapeString(t)}</p>`).join('\n'));
      }),
    ],
    [
      'cycler',
      new PyCallable('cycler', (items) => {
        if (!items.length) throw typeError('at least one item has to be provided');
        let pos = 0;
        const attrs = new Map<string, Value>();
        const obj = new PyObject('Cycler', attrs);
        obj.getter = (name) => {
          if (name === 'current') return items[pos] as Value;
          if (name === 'items') return [...items];
          if (name === 'next' || name === '__next__')
            return new PyCallable('next', () => {
              const v = items[pos] as Value;
              pos = (pos + 1) % items.length;
              return v;
            });
          if (name === 'reset') {
            return new PyCallable('reset', () => {
              pos = 0;
              return null;
            });
          }
          return undefined;
        };
        return obj;
      }),
    ],
    [
      'joiner',
      new PyCallable('joiner', (args, kwargs) => {
        const [sep] = bind('joiner', ['sep'], [', '], args, kwargs);
        let used = false;
        return new PyObject(
          'Joiner',
          new Map([['sep', sep as Value]]),
          false,
          new PyCallable('joiner', () => {
            if (!used) {
              used = true;
              return '';
            }
            return sep as Value;
          }),
        );
      }),
    ],
    [
      'namespace',
      new PyCallable('namespace', (args, kwargs) => {
        const attrs = new Map<string, Value>();
        if (args[0] instanceof PyDict) for (const [key, v] of args[0].entries()) attrs.set(str(key), v);
        for (const [key, v] of kwargs) attrs.set(key, v);
        return new PyObject('Namespace', attrs, true);
      }),
    ],
  ]);
