/**
 * The evaluator: walks the tree of ast.ts with Jinja2 3.1's semantics (scoping, loops, macros,
 * autoescaping, StrictUndefined). It only ever handles values of values.ts; every member,
 * filter, test and global is looked up in the explicit tables of builtins.ts and attributes.ts.
 *
 * Bounded while it runs: output is counted as it is written (LimitError past the limit), a step
 * counter checks the deadline in every loop iteration and call, recursion has a depth limit.
 */
import type { CallArgs, Expr, MacroDef, Stmt, Target, TemplateAst } from './ast.js';
import { getattr, getitem, sliceValue } from './attributes.js';
import { FILTERS, GLOBALS, TESTS, testEnv } from './builtins.js';
import {
  compare,
  contains,
  eq,
  escapeString,
  float,
  floatFloorDiv,
  floatMod,
  intArith,
  intNeg,
  isInt,
  isNumber,
  isString,
  iterate,
  type Kwargs,
  LimitError,
  length,
  Markup,
  markupEscape,
  num,
  PyCallable,
  PyDict,
  PyError,
  PyFloat,
  PyObject,
  PyTuple,
  pushAll,
  str,
  truthy,
  typeError,
  typeName,
  Undefined,
  undefinedName,
  type Value,
} from './values.js';

export interface Limits {
  /** UTF-8 bytes of output, and the longest string a template may build (in characters). */
  readonly maxOutputBytes: number;
  /** Epoch ms. */
  readonly deadline: number;
  readonly deadlineMs: number;
}

const MAX_DEPTH = 200;
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

class Out {
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
class Frame {
  readonly vars = new Map<string, Value>();
  constructor(readonly parent: Frame | null) {}

  lookup(name: string): Value | undefined {
    for (let f: Frame | null = this; f; f = f.parent) {
      const v = f.vars.get(name);
      if (v !== undefined || f.vars.has(name)) return v;
    }
    return undefined;
  }
}

const BIN_OPS: Record<string, (s: RenderState, a: Value, b: Value) => Value> = {
  '+': (s, a, b) => add(s, a, b),
  '-': (s, a, b) => arith(s, a, b, '-', (x, y) => x - y),
  '*': (s, a, b) => mul(s, a, b),
  '/': (_s, a, b) => {
    const y = numOperand(b, '/', a);
    const x = numOperand(a, '/', b);
    if (y === 0) throw new PyError('ZeroDivisionError', 'division by zero');
    return float(x / y);
  },
  '//': (s, a, b) => {
    const y = numOperand(b, '//', a);
    const x = numOperand(a, '//', b);
    if (y === 0) {
      throw new PyError(
        'ZeroDivisionError',
        isInt(a) && isInt(b) ? 'integer division or modulo by zero' : 'float floor division by zero',
      );
    }
    return isInt(a) && isInt(b) ? intArith('//', a, b, s) : float(floatFloorDiv(x, y));
  },
  '%': (s, a, b) => {
    if (isString(a)) return percentFormat(s, a, b);
    const y = numOperand(b, '%', a);
    const x = numOperand(a, '%', b);
    if (y === 0) {
      throw new PyError(
        'ZeroDivisionError',
        isInt(a) && isInt(b) ? 'integer division or modulo by zero' : 'float modulo',
      );
    }
    return isInt(a) && isInt(b) ? intArith('%', a, b, s) : float(floatMod(x, y));
  },
  '**': (s, a, b) => {
    const y = numOperand(b, '**', a);
    const x = numOperand(a, '**', b);
    if (isInt(a) && isInt(b) && y >= 0) return intArith('**', a, b, s);
    if (x === 0 && y < 0) throw new PyError('ZeroDivisionError', '0.0 cannot be raised to a negative power');
    return float(x ** y);
  },
};

const numOperand = (v: Value, op: string, other: Value): number => {
  if (v instanceof Undefined) return v.fail();
  if (!isNumber(v) || !isNumber(other)) {
    if (other instanceof Undefined) return other.fail();
    throw typeError(`unsupported operand type(s) for ${op}: '${typeName(v)}' and '${typeName(other)}'`);
  }
  return num(v);
};

const arith = (
  s: RenderState,
  a: Value,
  b: Value,
  op: '+' | '-' | '*',
  f: (x: number, y: number) => number,
): Value => {
  const x = numOperand(a, op, b);
  const y = numOperand(b, op, a);
  return isInt(a) && isInt(b) ? intArith(op, a, b, s) : float(f(x, y));
};

const add = (s: RenderState, a: Value, b: Value): Value => {
  if (isNumber(a) && isNumber(b)) return arith(s, a, b, '+', (x, y) => x + y);
  if (isString(a) && isString(b)) {
    s.guardString(str(a).length + str(b).length);
    if (a instanceof Markup || b instanceof Markup) return new Markup(markupEscape(a).s + markupEscape(b).s);
    return (a as string) + (b as string);
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    s.guardList(a.length + b.length);
    return [...a, ...b];
  }
  if (a instanceof PyTuple && b instanceof PyTuple) return new PyTuple([...a.items, ...b.items]);
  if (a instanceof Undefined) return a.fail();
  if (b instanceof Undefined) return b.fail();
  if (isString(a)) throw typeError(`can only concatenate str (not "${typeName(b)}") to str`);
  if (Array.isArray(a)) throw typeError(`can only concatenate list (not "${typeName(b)}") to list`);
  throw typeError(`unsupported operand type(s) for +: '${typeName(a)}' and '${typeName(b)}'`);
};

/** `*`: numbers, or a str/list/tuple repeated. */
export const mul = (s: RenderState, a: Value, b: Value): Value => {
  if (isNumber(a) && isNumber(b)) return arith(s, a, b, '*', (x, y) => x * y);
  const [seq, times] = isInt(b) ? [a, b] : isInt(a) ? [b, a] : [a, b];
  if (isInt(times)) {
    const n = Math.max(0, num(times));
    if (isString(seq)) {
      const text = str(seq);
      s.guardString(text.length * n);
      const out = text.repeat(n);
      return seq instanceof Markup ? new Markup(out) : out;
    }
    if (Array.isArray(seq) || seq instanceof PyTuple) {
      const items = iterate(seq);
      s.guardList(items.length * n);
      const out: Value[] = [];
      for (let i = 0; i < n; i++) pushAll(out, items);
      return Array.isArray(seq) ? out : new PyTuple(out);
    }
  }
  if (a instanceof Undefined) return a.fail();
  if (b instanceof Undefined) return b.fail();
  throw typeError(`unsupported operand type(s) for *: '${typeName(a)}' and '${typeName(b)}'`);
};

// Python's `%` formatting lives with the string filters.
import { percentFormat } from './format.js';

const COMPARE: Record<string, (a: Value, b: Value) => boolean> = {
  '==': (a, b) => eq(a, b),
  '!=': (a, b) => !eq(a, b),
  '<': (a, b) => compare(a, b, '<') < 0,
  '<=': (a, b) => compare(a, b, '<=') <= 0,
  '>': (a, b) => compare(a, b, '>') > 0,
  '>=': (a, b) => compare(a, b, '>=') >= 0,
  in: (a, b) => contains(b, a),
  notin: (a, b) => !contains(b, a),
};

class LoopState {
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

export class Evaluator {
  private readonly globals: Map<string, Value>;
  private selfObject: PyObject | undefined;
  private readonly root = new Frame(null);

  constructor(
    private readonly ast: TemplateAst,
    private readonly context: Map<string, Value>,
    readonly state: RenderState,
  ) {
    this.globals = GLOBALS(state);
  }

  render(): string {
    const out = new Out(this.state, true);
    const root = this.root;
    if (this.ast.extends) {
      // Jinja2 would load the parent template here; there is no loader.
      const load = this.ast.body.find((s) => s.t === 'load' && s.what === 'extends');
      this.state.line = load?.line ?? 1;
      throw new PyError('TypeError', 'no loader for this environment specified');
    }
    this.execBody(this.ast.body, root, out);
    return out.text();
  }

  // --- statements ---------------------------------------------------------------------------

  private execBody(body: readonly Stmt[], frame: Frame, out: Out): void {
    for (const stmt of body) this.exec(stmt, frame, out);
  }

  private exec(stmt: Stmt, frame: Frame, out: Out): void {
    if (stmt.t === 'data') {
      out.write(stmt.text);
      return;
    }
    this.state.line = stmt.line;
    switch (stmt.t) {
      case 'output':
        out.write(this.state.toOutput(this.eval(stmt.expr, frame)));
        return;
      case 'if':
        this.execBody(truthy(this.eval(stmt.test, frame)) ? stmt.body : stmt.else_, frame, out);
        return;
      case 'for':
        this.execFor(stmt, frame, out);
        return;
      case 'set':
        this.assign(stmt.target, this.eval(stmt.expr, frame), frame);
        return;
      case 'setblock': {
        const inner = new Out(this.state, false);
        this.execBody(stmt.body, new Frame(frame), inner);
        let value: Value = this.state.autoescape ? new Markup(inner.text()) : inner.text();
        if (stmt.filter) value = this.applyFilterChain(stmt.filter, value, frame);
        this.assign(stmt.target, value, frame);
        return;
      }
      case 'with': {
        const inner = new Frame(frame);
        const values = stmt.values.map((v) => this.eval(v, frame));
        for (const [i, t] of stmt.targets.entries()) this.assign(t, values[i] as Value, inner);
        this.execBody(stmt.body, inner, out);
        return;
      }
      case 'macro':
        frame.vars.set(stmt.name, this.makeMacro(stmt, frame));
        return;
      case 'callblock': {
        const caller = this.makeMacro(stmt.macro, frame);
        const call = stmt.call as Expr & { t: 'call' };
        const fn = this.eval(call.fn, frame);
        const [args, kwargs] = this.evalArgs(call, frame);
        kwargs.set('caller', caller);
        out.write(this.state.toOutput(this.callValue(fn, args, kwargs)));
        return;
      }
      case 'filterblock': {
        const inner = new Out(this.state, false);
        this.execBody(stmt.body, new Frame(frame), inner);
        const text = inner.text();
        const value = this.applyFilterChain(
          stmt.filter,
          this.state.autoescape ? new Markup(text) : text,
          frame,
        );
        out.write(this.state.toOutput(value));
        return;
      }
      case 'block':
        this.execBody(stmt.body, stmt.scoped ? new Frame(frame) : new Frame(this.root), out);
        return;
      case 'autoescape': {
        const saved = this.state.autoescape;
        this.state.autoescape = truthy(this.eval(stmt.expr, frame));
        try {
          this.execBody(stmt.body, frame, out);
        } finally {
          this.state.autoescape = saved;
        }
        return;
      }
      case 'load':
        throw new PyError('TypeError', 'no loader for this environment specified');
    }
  }

  private execFor(stmt: Stmt & { t: 'for' }, frame: Frame, out: Out): void {
    const run = (iterable: Value, depth0: number, target: Out): void => {
      let items = iterate(iterable);
      const inner = new Frame(frame);
      if (stmt.test) {
        const test = stmt.test;
        items = items.filter((item) => {
          this.state.tick();
          this.assign(stmt.target, item, inner);
          return truthy(this.eval(test, inner));
        });
      } else {
        items = [...items];
      }
      if (!items.length) {
        this.execBody(stmt.else_, frame, target);
        return;
      }
      const recurse = stmt.recursive
        ? new PyCallable('loop', (args) => this.callBody((sub) => run(args[0] ?? null, depth0 + 1, sub)))
        : null;
      const loop = new LoopState(items, depth0, recurse);
      const loopObject = new PyObject('LoopContext', new Map(), false, recurse ?? undefined);
      loopObject.getter = (name) => loop.attrs(name, this.state);
      for (let i = 0; i < items.length; i++) {
        this.state.tick();
        loop.index0 = i;
        inner.vars.clear();
        inner.vars.set('loop', loopObject);
        this.assign(stmt.target, items[i] as Value, inner);
        this.execBody(stmt.body, inner, target);
      }
    };
    run(this.eval(stmt.iter, frame), 0, out);
  }

  private assign(target: Target, value: Value, frame: Frame): void {
    if (target.t === 'name') {
      frame.vars.set(target.name, value);
    } else if (target.t === 'tuple') {
      const items = iterate(value);
      if (items.length !== target.items.length) {
        throw new PyError(
          'ValueError',
          items.length > target.items.length
            ? `too many values to unpack (expected ${target.items.length})`
            : `not enough values to unpack (expected ${target.items.length}, got ${items.length})`,
        );
      }
      for (const [i, t] of target.items.entries()) this.assign(t, items[i] as Value, frame);
    } else {
      const ns = this.lookup(target.ns, frame);
      if (!(ns instanceof PyObject) || !ns.assignable) {
        if (ns instanceof Undefined) ns.fail();
        throw new PyError('TemplateRuntimeError', 'cannot assign attribute on non-namespace object');
      }
      ns.attrs.set(target.attr, value);
    }
  }

  /** A macro, block or recursive loop call: one level deeper, its output captured as its value. */
  private callBody(run: (out: Out) => void): Value {
    const out = new Out(this.state, false);
    this.enter();
    try {
      run(out);
    } finally {
      this.state.depth--;
    }
    return this.state.autoescape ? new Markup(out.text()) : out.text();
  }

  private enter(): void {
    this.state.tick();
    if (++this.state.depth > MAX_DEPTH) {
      this.state.depth = 0;
      throw new PyError('RecursionError', 'maximum recursion depth exceeded');
    }
  }

  private makeMacro(def: MacroDef, frame: Frame): PyCallable {
    const uses = usedNames(def.body);
    const catchVarargs = uses.has('varargs');
    const catchKwargs = uses.has('kwargs');
    const callerUsed = uses.has('caller');
    const macro = new PyCallable(
      def.name,
      (args, kwargs) => {
        const inner = new Frame(frame);
        const params = def.params;
        if (args.length > params.length && !catchVarargs) {
          throw typeError(`macro '${def.name}' takes not more than ${params.length} argument(s)`);
        }
        const rest = new Map(kwargs);
        params.forEach((p, i) => {
          if (i < args.length) {
            if (rest.has(p.name))
              throw typeError(`macro '${def.name}' got multiple values for argument '${p.name}'`);
            inner.vars.set(p.name, args[i] as Value);
          } else if (rest.has(p.name)) {
            inner.vars.set(p.name, rest.get(p.name) as Value);
            rest.delete(p.name);
          } else if (p.default) {
            inner.vars.set(p.name, this.eval(p.default, inner));
          } else {
            inner.vars.set(p.name, new Undefined(`parameter '${p.name}' was not provided`));
          }
        });
        let caller = rest.get('caller');
        if (caller !== undefined) {
          if (!callerUsed)
            throw typeError(
              `macro '${def.name}' was invoked with two values for the special caller argument`,
            );
          rest.delete('caller');
        } else if (callerUsed) {
          caller = new Undefined("'caller' is undefined");
        }
        if (caller !== undefined) inner.vars.set('caller', caller);
        if (catchVarargs) inner.vars.set('varargs', new PyTuple(args.slice(params.length)));
        if (catchKwargs) inner.vars.set('kwargs', PyDict.from(rest.entries()));
        else if (rest.size) {
          throw typeError(`macro '${def.name}' takes no keyword argument '${rest.keys().next().value}'`);
        }
        const line = this.state.line;
        const result = this.callBody((out) => this.execBody(def.body, inner, out));
        this.state.line = line;
        return result;
      },
      new Map<string, Value>([
        ['name', def.name],
        ['arguments', new PyTuple(def.params.map((p) => p.name))],
        ['catch_kwargs', catchKwargs],
        ['catch_varargs', catchVarargs],
        ['caller', callerUsed],
      ]),
    );
    return macro;
  }

  // --- expressions --------------------------------------------------------------------------

  lookup(name: string, frame: Frame): Value {
    const local = frame.lookup(name);
    if (local !== undefined) return local;
    const v = this.context.get(name);
    if (v !== undefined) return v;
    if (name === 'self') return this.self();
    return this.globals.get(name) ?? undefinedName(name);
  }

  private self(): PyObject {
    if (!this.selfObject) {
      const attrs = new Map<string, Value>();
      for (const [name, block] of this.ast.blocks) {
        attrs.set(
          name,
          new PyCallable(name, () =>
            this.callBody((out) => this.execBody(block.body, new Frame(this.root), out)),
          ),
        );
      }
      this.selfObject = new PyObject('TemplateReference', attrs);
    }
    return this.selfObject;
  }

  eval(e: Expr, frame: Frame): Value {
    switch (e.t) {
      case 'const':
        return e.value;
      case 'name':
        return this.lookup(e.name, frame);
      case 'tuple':
        return new PyTuple(e.items.map((i) => this.eval(i, frame)));
      case 'list':
        return e.items.map((i) => this.eval(i, frame));
      case 'dict':
        return PyDict.from(e.pairs.map(([k, v]) => [this.eval(k, frame), this.eval(v, frame)] as const));
      case 'getattr':
        return getattr(this.state, this.eval(e.obj, frame), e.name);
      case 'getitem': {
        const obj = this.eval(e.obj, frame);
        if (e.key.t === 'slice') {
          const k = e.key;
          const part = (x: Expr | null) => (x ? this.eval(x, frame) : null);
          return sliceValue(obj, part(k.start), part(k.stop), part(k.step));
        }
        return getitem(this.state, obj, this.eval(e.key, frame));
      }
      case 'slice':
        throw new PyError('TemplateSyntaxError', 'a slice is only valid inside []');
      case 'call': {
        const fn = this.eval(e.fn, frame);
        const [args, kwargs] = this.evalArgs(e, frame);
        return this.callValue(fn, args, kwargs);
      }
      case 'filter':
        return this.applyFilter(e, e.node ? this.eval(e.node, frame) : null, frame);
      case 'test': {
        const value = this.eval(e.node, frame);
        const [args, kwargs] = this.evalArgs(e, frame);
        const test = TESTS.get(e.name);
        // Only reachable inside an `if` (parsing refuses unknown tests elsewhere), as in Jinja2.
        if (!test) throw new PyError('TemplateRuntimeError', `No test named '${e.name}' found.`);
        return test(this.state, value, args, kwargs, testEnv);
      }
      case 'not':
        return !truthy(this.eval(e.node, frame));
      case 'neg': {
        const v = this.eval(e.node, frame);
        if (!isNumber(v)) {
          if (v instanceof Undefined) return v.fail();
          throw typeError(`bad operand type for unary -: '${typeName(v)}'`);
        }
        return v instanceof PyFloat ? float(-v.v) : intNeg(v);
      }
      case 'pos': {
        const v = this.eval(e.node, frame);
        if (!isNumber(v)) {
          if (v instanceof Undefined) return v.fail();
          throw typeError(`bad operand type for unary +: '${typeName(v)}'`);
        }
        return typeof v === 'boolean' ? num(v) : v;
      }
      case 'bin':
        return (BIN_OPS[e.op] as (s: RenderState, a: Value, b: Value) => Value)(
          this.state,
          this.eval(e.left, frame),
          this.eval(e.right, frame),
        );
      case 'and': {
        const left = this.eval(e.left, frame);
        return truthy(left) ? this.eval(e.right, frame) : left;
      }
      case 'or': {
        const left = this.eval(e.left, frame);
        return truthy(left) ? left : this.eval(e.right, frame);
      }
      case 'compare': {
        let left = this.eval(e.expr, frame);
        for (const [op, rightExpr] of e.ops) {
          const right = this.eval(rightExpr, frame);
          if (!(COMPARE[op] as (a: Value, b: Value) => boolean)(left, right)) return false;
          left = right;
        }
        return true;
      }
      case 'concat': {
        const parts = e.items.map((i) => this.eval(i, frame));
        // Jinja2 folds constant expressions when it compiles, and its folded `~` joins plain strings.
        const markup =
          this.state.autoescape && parts.some((p) => p instanceof Markup) && !e.items.every(isConstant);
        const strings = parts.map((p) => (markup ? markupEscape(p).s : str(p)));
        this.state.guardString(strings.reduce((n, s) => n + s.length, 0));
        return markup ? new Markup(strings.join('')) : strings.join('');
      }
      case 'cond':
        if (truthy(this.eval(e.test, frame))) return this.eval(e.body, frame);
        return e.else_
          ? this.eval(e.else_, frame)
          : new Undefined(
              'the inline if-expression evaluated to false and no else section was defined.',
              true,
            );
    }
  }

  evalArgs(call: CallArgs, frame: Frame): [Value[], Kwargs] {
    const args = call.args.map((a) => this.eval(a, frame));
    const kwargs: Kwargs = new Map();
    for (const [name, expr] of call.kwargs) kwargs.set(name, this.eval(expr, frame));
    if (call.dynArgs) pushAll(args, iterate(this.eval(call.dynArgs, frame)));
    if (call.dynKwargs) {
      const d = this.eval(call.dynKwargs, frame);
      if (!(d instanceof PyDict)) throw typeError('argument after ** must be a mapping');
      for (const [k, v] of d.entries()) kwargs.set(str(k), v);
    }
    return [args, kwargs];
  }

  callValue(fn: Value, args: Value[], kwargs: Kwargs): Value {
    if (fn instanceof PyCallable) return fn.call(args, kwargs);
    if (fn instanceof PyObject && fn.callable) return fn.callable.call(args, kwargs);
    if (fn instanceof Undefined) return fn.fail();
    throw typeError(`'${typeName(fn)}' object is not callable`);
  }

  private applyFilter(e: Expr & { t: 'filter' }, value: Value, frame: Frame): Value {
    const [args, kwargs] = this.evalArgs(e, frame);
    const filter = FILTERS.get(e.name);
    // Only reachable inside an `if` (parsing refuses unknown filters elsewhere), as in Jinja2.
    if (!filter) throw new PyError('TemplateRuntimeError', `No filter named '${e.name}' found.`);
    return filter(this.state, value, args, kwargs, this.callEnv);
  }

  /** A `{% filter %}` or `{% set x | f %}` chain: the innermost filter gets the value. */
  private applyFilterChain(chain: Expr, value: Value, frame: Frame): Value {
    if (chain.t !== 'filter') return value;
    const inner = chain.node ? this.applyFilterChain(chain.node, value, frame) : value;
    return this.applyFilter(chain, inner, frame);
  }

  /** What a filter may do besides reading its arguments: call a callable the template gave it. */
  readonly callEnv = {
    call: (fn: Value, args: Value[], kwargs: Kwargs) => this.callValue(fn, args, kwargs),
  };
}

const PURE_FILTERS = new Set([
  'safe',
  'escape',
  'e',
  'upper',
  'lower',
  'trim',
  'string',
  'title',
  'capitalize',
  'replace',
  'format',
  'join',
  'int',
  'float',
  'round',
  'abs',
  'default',
  'd',
  'length',
  'count',
]);

/** Whether Jinja2's optimizer would fold `e` to a constant when it compiles the template. */
const isConstant = (e: Expr | null): boolean => {
  if (!e) return true;
  switch (e.t) {
    case 'const':
      return true;
    case 'tuple':
    case 'list':
    case 'concat':
      return e.items.every(isConstant);
    case 'neg':
    case 'pos':
    case 'not':
      return isConstant(e.node);
    case 'bin':
      return isConstant(e.left) && isConstant(e.right);
    case 'filter':
      return (
        PURE_FILTERS.has(e.name) &&
        isConstant(e.node) &&
        e.args.every(isConstant) &&
        e.kwargs.every(([, v]) => isConstant(v)) &&
        !e.dynArgs &&
        !e.dynKwargs
      );
    default:
      return false;
  }
};

const usedNamesCache = new WeakMap<readonly Stmt[], Set<string>>();

/** Names a macro body reads (to know whether it takes varargs, kwargs or caller); once per parsed body. */
const usedNames = (body: readonly Stmt[]): Set<string> => {
  const cached = usedNamesCache.get(body);
  if (cached) return cached;
  const names = new Set<string>();
  usedNamesCache.set(body, names);
  const visit = (node: unknown): void => {
    if (!node || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      for (const n of node) visit(n);
      return;
    }
    const n = node as { t?: string; name?: string };
    if (n.t === 'name' && typeof n.name === 'string') names.add(n.name);
    // Nested macros have their own varargs/kwargs/caller.
    if (n.t === 'macro') return;
    for (const [k, v] of Object.entries(node)) if (k !== 'value') visit(v);
  };
  visit(body);
  return names;
};

export type { Frame };
export type FilterFn = (
  state: RenderState,
  value: Value,
  args: Value[],
  kwargs: Kwargs,
  env: { call: (fn: Value, args: Value[], kwargs: Kwargs) => Value },
) => Value;
export type TestFn = (
  state: RenderState,
  value: Value,
  args: Value[],
  kwargs: Kwargs,
  env: { hasFilter(name: string): boolean; hasTest(name: string): boolean },
) => boolean;
export { length };
