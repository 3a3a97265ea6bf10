import { eq } from './protocols.js';
import {
  escapeString,
  type Kwargs,
  LimitError,
  Markup,
  PyCallable,
  str,
  typeError,
  Undefined,
  undefinedName,
  type Value,
} from './values.js';

interface Limits {
  /** UTF-8 bytes of output, and the longest string a template may build (in characters). */
  readonly maxOutputBytes: number;
  /** Epoch ms. */
  readonly deadline: number;
  readonly deadlineMs: number;
}

export const MAX_DEPTH = 200;
const MAX_LIST_ITEMS = 1_000_000;

/** What every builtin gets: the render's limits and its autoescape state. */
export class RenderState {
  steps = 0;
  depth = 0;
  autoescape = true;
  /** Line of the statement running, for errors. */
  line = 0;
  /** Every character written anywhere (captures included), bounded to stop quadratic work. */
  written = 0;

  constructor(readonly limits: Limits) {}

  tick(n = 1): void {
    this.steps += n;
    if (this.steps >= 1024) {
      this.steps = 0;
      if (Date.now() > this.limits.deadline) {
        throw new LimitError(`Templating exceeded its ${this.limits.deadlineMs} ms limit`);
      }
    }
  }

  /** A string of `n` characters is about to be built. */
  guardString(n: number): void {
    if (n > this.limits.maxOutputBytes) {
      throw new LimitError(
        `Template builds a string of ${n} characters; the limit is ${this.limits.maxOutputBytes}`,
      );
    }
    this.tick(Math.ceil(n / 65536));
  }

  guardList(n: number): void {
    if (n > MAX_LIST_ITEMS)
      throw new LimitError(`Template builds a list of ${n} items; the limit is ${MAX_LIST_ITEMS}`);
    this.tick(Math.ceil(n / 4096));
  }

  /** Finalize a value for output, as Jinja2 does with autoescaping. */
  toOutput(v: Value): string {
    if (typeof v === 'string') return this.autoescape ? escapeString(v) : v;
    if (v instanceof Markup) return v.s;
    return this.autoescape ? escapeString(str(v)) : str(v);
  }
}

export class Out {
  parts: string[] = [];
  bytes = 0;
  constructor(
    private readonly state: RenderState,
    private readonly top: boolean,
  ) {}

  write(s: string): void {
    if (!s) return;
    // biome-ignore lint/suspicious/noControlCharactersInRegex: ASCII is one byte a character
    const n = s.length < 4096 && !/[^\x00-\x7f]/.test(s) ? s.length : Buffer.byteLength(s, 'utf8');
    this.bytes += n;
    this.state.written += s.length;
    const max = this.state.limits.maxOutputBytes;
    if (this.bytes > max) {
      throw new LimitError(
        this.top
          ? `The HTML is over ${max} bytes after templating`
          : `Template builds a string of over ${max} bytes`,
        this.top,
      );
    }
    if (this.state.written > 8 * max) throw new LimitError('Template writes too much text');
    this.parts.push(s);
    if (this.parts.length > 4096) this.parts = [this.parts.join('')];
  }

  text(): string {
    return this.parts.join('');
  }
}

/** A scope: `for`, `with`, macro bodies and blocks open one; `if` does not. */
export class Frame {
  readonly vars = new Map<string, Value>();
  constructor(
    readonly parent: Frame | null,
    /**
     * Names this frame assigns before reading them (meta.ts): Jinja2 gives each its own variable,
     * undefined until assigned, so the render's variable of that name is never seen from here.
     */
    readonly declared?: ReadonlySet<string>,
  ) {}

  /** undefined: not a name of this frame or its parents (read the context). */
  lookup(name: string): Value | undefined {
    for (let f: Frame | null = this; f; f = f.parent) {
      const v = f.vars.get(name);
      if (v !== undefined || f.vars.has(name)) return v;
      if (f.declared?.has(name)) return undefinedName(name);
    }
    return undefined;
  }
}

export class LoopState {
  index0 = 0;
  private lastChanged: Value[] | undefined;
  constructor(
    readonly items: Value[],
    readonly depth0: number,
    readonly recurse: PyCallable | null,
  ) {}
  attrs(name: string, state: RenderState): Value | undefined {
    const n = this.items.length;
    const i = this.index0;
    switch (name) {
      case 'index':
        return i + 1;
      case 'index0':
        return i;
      case 'revindex':
        return n - i;
      case 'revindex0':
        return n - i - 1;
      case 'first':
        return i === 0;
      case 'last':
        return i === n - 1;
      case 'length':
        return n;
      case 'depth':
        return this.depth0 + 1;
      case 'depth0':
        return this.depth0;
      case 'previtem':
        return i > 0 ? (this.items[i - 1] as Value) : new Undefined('there is no previous item');
      case 'nextitem':
        return i < n - 1 ? (this.items[i + 1] as Value) : new Undefined('there is no next item');
      case 'cycle':
        return new PyCallable('cycle', (args) => {
          if (!args.length) throw typeError('no items for cycling given');
          return args[i % args.length] as Value;
        });
      case 'changed':
        return new PyCallable('changed', (args) => {
          if (
            this.lastChanged &&
            this.lastChanged.length === args.length &&
            this.lastChanged.every((v, k) => eq(v, args[k] as Value))
          ) {
            return false;
          }
          this.lastChanged = args;
          return true;
        });
      default:
        void state;
        return undefined;
    }
  }
}

/** Positional and keyword arguments bound to named parameters; `undefined` marks a required one. */
export const bind = (
  fname: string,
  names: readonly string[],
  defaults: readonly (Value | undefined)[],
  args: readonly Value[],
  kwargs: Kwargs,
): Value[] => {
  if (args.length > names.length) {
    throw typeError(`${fname}() takes at most ${names.length} arguments (${args.length} given)`);
  }
  const out: Value[] = [];
  for (let i = 0; i < names.length; i++) {
    const name = names[i] as string;
    if (i < args.length) {
      if (kwargs.has(name)) throw typeError(`${fname}() got multiple values for argument '${name}'`);
      out.push(args[i] as Value);
    } else if (kwargs.has(name)) {
      out.push(kwargs.get(name) as Value);
    } else {
      const d = defaults[i];
      if (d === undefined) throw typeError(`${fname}() missing required argument: '${name}'`);
      out.push(d);
    }
  }
  for (const key of kwargs.keys()) {
    if (!names.includes(key)) throw typeError(`${fname}() got an unexpected keyword argument '${key}'`);
  }
  return out;
};

/** What a builtin may ask of the environment: call a callable the template gave it, find a filter or test by name. */
export interface Environment {
  call(fn: Value, args: Value[], kwargs: Kwargs): Value;
  filter(name: string): FilterFn | undefined;
  test(name: string): TestFn | undefined;
}

export type FilterFn = (
  state: RenderState,
  value: Value,
  args: Value[],
  kwargs: Kwargs,
  env: Environment,
) => Value;
export type TestFn = (
  state: RenderState,
  value: Value,
  args: Value[],
  kwargs: Kwargs,
  env: Environment,
) => boolean;

/** Member access as the template sees it (members.ts), handed to the builtins that look members up. */
export interface MemberAccess {
  getattr(state: RenderState, obj: Value, name: string): Value;
  getitem(state: RenderState, obj: Value, key: Value): Value;
}

/** A method of a builtin type: `self` is the object it was read from. */
export type Method = (
  state: RenderState,
  self: Value,
  args: Value[],
  kwargs: Kwargs,
  access: MemberAccess,
) => Value;

/** Adds a builtin to `table` under each of its names. */
export const define =
  <F>(table: Map<string, F>) =>
  (names: string | string[], fn: F): void => {
    for (const n of Array.isArray(names) ? names : [names]) table.set(n, fn);
  };
