/**
 * The evaluator: walks the tree of nodes.ts with Jinja2 3.1's semantics (scoping, loops, macros,
 * autoescaping, StrictUndefined). It only ever handles values of values.ts; every member,
 * filter, test and global is looked up in the explicit tables of filters/, tests.ts, defaults.ts and members.ts.
 *
 * Bounded while it runs: output is counted as it is written (LimitError past the limit), a step
 * counter checks the deadline in every loop iteration and call, recursion has a depth limit.
 */

import { GLOBALS } from './defaults.js';
import { FILTERS } from './filters/index.js';
import { PYTHON_KEYWORDS } from './keywords.js';
import { getattr, getitem } from './members.js';
import type { DeclaredNames } from './meta.js';
import type { CallArgs, Expr, MacroDef, Stmt, Target, TemplateAst } from './nodes.js';
import { intNeg } from './numbers.js';
import { BIN_OPS, COMPARE } from './operators.js';
import { iterate, truthy } from './protocols.js';
import { type Environment, Frame, LoopState, MAX_DEPTH, Out, type RenderState } from './runtime.js';
import { sliceValue } from './slices.js';
import { TESTS } from './tests.js';
import {
  float,
  isNumber,
  type Kwargs,
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
  typeError,
  typeName,
  Undefined,
  undefinedName,
  type Value,
} from './values.js';

export class Evaluator {
  private readonly globals: Map<string, Value>;
  private selfObject: PyObject | undefined;
  private readonly root: Frame;

  constructor(
    private readonly ast: TemplateAst,
    private readonly context: Map<string, Value>,
    readonly state: RenderState,
    /** The names each frame declares (meta.ts), by the statements it runs. */
    private readonly declared: DeclaredNames = new Map(),
  ) {
    this.globals = GLOBALS(state);
    this.root = new Frame(null, declared.get(ast.body));
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
        this.execBody(stmt.body, new Frame(frame, this.declared.get(stmt.body)), inner);
        let value: Value = this.state.autoescape ? new Markup(inner.text()) : inner.text();
        if (stmt.filter) value = this.applyFilterChain(stmt.filter, value, frame);
        this.assign(stmt.target, value, frame);
        return;
      }
      case 'with': {
        const inner = new Frame(frame, this.declared.get(stmt.body));
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
        this.execBody(stmt.body, new Frame(frame, this.declared.get(stmt.body)), inner);
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
          // Jinja2 scopes the body (a Scope node): what it sets stays inside.
          this.execBody(stmt.body, new Frame(frame, this.declared.get(stmt.body)), out);
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
      const inner = new Frame(frame, this.declared.get(stmt.body));
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
        this.execBody(stmt.else_, new Frame(frame, this.declared.get(stmt.else_)), target);
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
        const inner = new Frame(frame, this.declared.get(def.body));
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
        return test(this.state, value, args, kwargs, this.env);
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
      // Python refuses a keyword given twice, unless Jinja2 passed them all as one dict (a Python keyword among them).
      const merged = call.kwargs.some(([name]) => PYTHON_KEYWORDS.has(name));
      for (const [k, v] of d.entries()) {
        const key = str(k);
        if (!merged && kwargs.has(key)) throw typeError(`got multiple values for keyword argument '${key}'`);
        kwargs.set(key, v);
      }
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
    return filter(this.state, value, args, kwargs, this.env);
  }

  /** A `{% filter %}` or `{% set x | f %}` chain: the innermost filter gets the value. */
  private applyFilterChain(chain: Expr, value: Value, frame: Frame): Value {
    if (chain.t !== 'filter') return value;
    const inner = chain.node ? this.applyFilterChain(chain.node, value, frame) : value;
    return this.applyFilter(chain, inner, frame);
  }

  /** What a filter or test may do besides reading its arguments: call a callable the template gave it, find a filter or test. */
  readonly env: Environment = {
    call: (fn, args, kwargs) => this.callValue(fn, args, kwargs),
    filter: (name) => FILTERS.get(name),
    test: (name) => TESTS.get(name),
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
