/**
 * Jinja2's meta.find_undeclared_variables over our tree: the symbol tracking of jinja2/idtracking.py
 * (Symbols, RootVisitor, FrameSymbolVisitor) with the frames jinja2/compiler.py opens (template,
 * block, macro, call block, for body / else / test, with, filter block, set block, autoescape
 * scope). A name is undeclared when some frame loads it "resolve" (from the render's context):
 * read before any store in its frame and its parents, or stored in only some branches of an `if`.
 */
import type { CallArgs, Expr, MacroDef, Stmt, Target } from './nodes.js';

type Load = 'param' | 'resolve' | 'alias' | 'undefined';

/**
 * A frame's symbols. A branch of an `if` (copy) starts as Jinja2's copy of its frame's, but holds
 * only what the branch itself adds, and reads through to the symbols it was copied from:
 * copying every name at every `if` made a template of many names and many `if`s quadratic (a
 * 1 MiB one took seconds).
 */
class Symbols {
  readonly level: number;
  /** What this frame (or branch) defined itself; a branch reads `base` for the rest. */
  readonly refs = new Map<string, string>();
  readonly loads = new Map<string, [Load, string | null]>();
  readonly stores = new Set<string>();

  constructor(
    readonly parent: Symbols | null,
    private readonly base: Symbols | null = null,
  ) {
    this.level = base ? base.level : parent ? parent.level + 1 : 0;
  }

  private define(name: string, load: [Load, string | null]): string {
    const ident = `l_${this.level}_${name}`;
    this.refs.set(name, ident);
    this.loads.set(ident, load);
    return ident;
  }

  /** The name's ref in this frame (its branches' bases included), not its parents. */
  private ownRef(name: string): string | undefined {
    return this.refs.get(name) ?? this.base?.ownRef(name);
  }

  private hasStore(name: string): boolean {
    return this.stores.has(name) || (this.base?.hasStore(name) ?? false);
  }

  findRef(name: string): string | undefined {
    return this.ownRef(name) ?? this.parent?.findRef(name);
  }

  copy(): Symbols {
    return new Symbols(this.parent, this);
  }

  store(name: string): void {
    this.stores.add(name);
    if (this.ownRef(name) !== undefined) return;
    const outer = this.parent?.findRef(name);
    if (outer !== undefined) this.define(name, ['alias', outer]);
    else this.define(name, ['undefined', null]);
  }

  declareParameter(name: string): void {
    this.stores.add(name);
    this.define(name, ['param', null]);
  }

  load(name: string): void {
    if (this.findRef(name) === undefined) this.define(name, ['resolve', name]);
  }

  /** `branches` are copies of this: what each added is merged in (idtracking.py's branch_update). */
  branchUpdate(branches: Symbols[]): void {
    const stores = new Map<string, number>();
    for (const b of branches) {
      for (const target of b.stores)
        if (!this.hasStore(target)) stores.set(target, (stores.get(target) ?? 0) + 1);
    }
    for (const b of branches) {
      for (const [k, v] of b.refs) this.refs.set(k, v);
      for (const [k, v] of b.loads) this.loads.set(k, v);
      for (const s of b.stores) this.stores.add(s);
    }
    for (const [name, count] of stores) {
      if (count === branches.length) continue;
      const target = this.findRef(name) as string;
      const outer = this.parent?.findRef(name);
      this.loads.set(target, outer !== undefined ? ['alias', outer] : ['resolve', name]);
    }
  }
}

/** The environment's globals, which find_undeclared_variables leaves out; `self` is declared for the template. */
const GLOBALS = new Set(['range', 'dict', 'lipsum', 'cycler', 'joiner', 'namespace', 'self', 'asset']);

/** A frame to analyse once its parent is complete: the compiler visits nested frames after the parent's analysis. */
type Pending = () => void;

/** The names whose reads change a frame's symbols (a loop's `loop`, a block's, a macro's). */
const SPECIAL_NAMES = ['loop', 'self', 'super', 'caller', 'kwargs', 'varargs'] as const;
type SpecialName = (typeof SPECIAL_NAMES)[number];
const SPECIAL_BITS = new Map<string, number>(SPECIAL_NAMES.map((name, i) => [name, 1 << i]));

/**
 * Which special names each list of nodes reads (compiler.find_undeclared: every node but blocks),
 * as bits, kept per list: a loop nested in a loop is walked once, not once per enclosing loop
 * (1,000 nested loops walked each other's bodies a thousand times).
 */
const specialReads = new WeakMap<readonly unknown[], number>();

const readsIn = (node: unknown): number => {
  if (!node || typeof node !== 'object') return 0;
  if (Array.isArray(node)) {
    const known = specialReads.get(node);
    if (known !== undefined) return known;
    let bits = 0;
    for (const n of node) bits |= readsIn(n);
    specialReads.set(node, bits);
    return bits;
  }
  const n = node as { t?: string; name?: unknown } & Record<string, unknown>;
  if (n.t === 'block') return 0;
  let bits = n.t === 'name' && typeof n.name === 'string' ? (SPECIAL_BITS.get(n.name) ?? 0) : 0;
  for (const k in n) if (k !== 'value') bits |= readsIn(n[k]);
  return bits;
};

/** Names of `wanted` a body reads (compiler.find_undeclared: every node but blocks). */
const readsOf = (body: readonly Stmt[], wanted: readonly SpecialName[]): Set<string> => {
  const bits = readsIn(body);
  return new Set(wanted.filter((name) => bits & (SPECIAL_BITS.get(name) as number)));
};

/**
 * Names a frame declares without reading them from the context (Jinja2 gives such a name its own
 * variable, undefined until the frame assigns it), by the statements the frame runs.
 */
export type DeclaredNames = ReadonlyMap<readonly Stmt[], ReadonlySet<string>>;

export const analyseSymbols = (body: readonly Stmt[]): { undeclared: string[]; declared: DeclaredNames } => {
  const undeclared = new Set<string>();
  const declared = new Map<readonly Stmt[], ReadonlySet<string>>();
  const enter = (sym: Symbols) => {
    for (const [action, param] of sym.loads.values()) {
      if (action === 'resolve' && param !== null && !GLOBALS.has(param)) undeclared.add(param);
    }
  };

  /** FrameSymbolVisitor: one frame's loads and stores, stopping at nodes that open frames of their own. */
  const frameVisitor = (initial: Symbols, pending: Pending[]) => {
    let sym = initial;
    const expr = (e: Expr | null): void => {
      if (!e) return;
      switch (e.t) {
        case 'const':
          return;
        case 'name':
          sym.load(e.name);
          return;
        case 'tuple':
        case 'list':
        case 'concat':
          for (const i of e.items) expr(i);
          return;
        case 'dict':
          for (const [k, v] of e.pairs) {
            expr(k);
            expr(v);
          }
          return;
        case 'getattr':
          expr(e.obj);
          return;
        case 'getitem':
          expr(e.obj);
          expr(e.key);
          return;
        case 'slice':
          expr(e.start);
          expr(e.stop);
          expr(e.step);
          return;
        case 'call':
          expr(e.fn);
          args(e);
          return;
        case 'filter':
        case 'test':
          expr(e.node);
          args(e);
          return;
        case 'not':
        case 'neg':
        case 'pos':
          expr(e.node);
          return;
        case 'bin':
        case 'and':
        case 'or':
          expr(e.left);
          expr(e.right);
          return;
        case 'compare':
          expr(e.expr);
          for (const [, x] of e.ops) expr(x);
          return;
        case 'cond':
          expr(e.test);
          expr(e.body);
          expr(e.else_);
          return;
      }
    };
    const args = (c: CallArgs) => {
      for (const a of c.args) expr(a);
      for (const [, v] of c.kwargs) expr(v);
      expr(c.dynArgs);
      expr(c.dynKwargs);
    };
    const target = (t: Target, asParam = false): void => {
      if (t.t === 'name') {
        if (asParam) sym.declareParameter(t.name);
        else sym.store(t.name);
      } else if (t.t === 'tuple') for (const i of t.items) target(i, asParam);
      else sym.load(t.ns);
    };
    const stmts = (list: readonly Stmt[]): void => {
      for (const s of list) stmt(s);
    };
    /** `if` with its `elif`s (nested in else_ by our parser) and `else`, as Jinja2's visit_If sees them. */
    const ifStmt = (s: Stmt & { t: 'if' }) => {
      expr(s.test);
      const original = sym;
      const inner = (run: () => void): Symbols => {
        sym = original.copy();
        const rv = sym;
        run();
        sym = original;
        return rv;
      };
      const elifs: (Stmt & { t: 'if' })[] = [];
      let rest = s.else_;
      while (rest.length === 1 && rest[0]?.t === 'if' && rest[0].elif) {
        elifs.push(rest[0]);
        rest = rest[0].else_;
      }
      const body = inner(() => stmts(s.body));
      const elif = inner(() => {
        for (const e of elifs) {
          // Each elif is an If of its own with no elif or else: visited like one.
          expr(e.test);
          const o = sym;
          const b = o.copy();
          sym = b;
          stmts(e.body);
          sym = o;
          sym.branchUpdate([b, o.copy(), o.copy()]);
        }
      });
      const else_ = inner(() => stmts(rest));
      sym.branchUpdate([body, elif, else_]);
    };
    const stmt = (s: Stmt): void => {
      switch (s.t) {
        case 'data':
          return;
        case 'output':
          expr(s.expr);
          return;
        case 'if':
          ifStmt(s);
          return;
        case 'for': {
          expr(s.iter);
          const parent = sym;
          pending.push(() => {
            frame(
              parent,
              (v) => {
                v.target(s.target, true);
                v.stmts(s.body);
              },
              (child) => {
                if (s.recursive || readsOf(s.body, ['loop']).size) child.declareParameter('loop');
              },
              s.body,
            );
            if (s.else_.length) frame(parent, (v) => v.stmts(s.else_), undefined, s.else_);
            if (s.test) {
              const test = s.test;
              frame(parent, (v) => {
                v.target(s.target, true);
                v.expr(test);
              });
            }
          });
          return;
        }
        case 'set':
          expr(s.expr);
          target(s.target);
          return;
        case 'setblock': {
          target(s.target);
          const parent = sym;
          pending.push(() => frame(parent, (v) => v.stmts(s.body), undefined, s.body));
          return;
        }
        case 'with': {
          for (const v of s.values) expr(v);
          const parent = sym;
          pending.push(() =>
            frame(
              parent,
              (v) => {
                for (const t of s.targets) v.target(t);
                v.stmts(s.body);
              },
              undefined,
              s.body,
            ),
          );
          return;
        }
        case 'macro': {
          sym.store(s.name);
          const parent = sym;
          pending.push(() => macroFrame(parent, s));
          return;
        }
        case 'callblock': {
          expr(s.call);
          const parent = sym;
          pending.push(() => macroFrame(parent, s.macro));
          return;
        }
        case 'filterblock': {
          expr(s.filter);
          const parent = sym;
          pending.push(() =>
            frame(
              parent,
              (v) => {
                v.stmts(s.body);
                v.expr(s.filter);
              },
              undefined,
              s.body,
            ),
          );
          return;
        }
        case 'block':
          // A block renders in a frame of its own with no parent: it reads the context, not the template's names.
          pending.push(() =>
            frame(
              null,
              (v) => v.stmts(s.body),
              (child) => {
                for (const n of readsOf(s.body, ['self', 'super'])) child.declareParameter(n);
              },
            ),
          );
          return;
        case 'autoescape': {
          // Jinja2 wraps the body in a Scope: a frame of its own, which also evaluates the option.
          const parent = sym;
          pending.push(() =>
            frame(
              parent,
              (v) => {
                v.expr(s.expr);
                v.stmts(s.body);
              },
              undefined,
              s.body,
            ),
          );
          return;
        }
        case 'load':
          for (const e of s.exprs) expr(e);
          for (const n of s.names) sym.store(n);
          return;
      }
    };
    return {
      expr,
      target,
      stmts,
      get symbols() {
        return sym;
      },
    };
  };

  /** Analyse a frame (the compiler's analyze_node), let the compiler declare its special names, enter it, then its children. */
  const frame = (
    parent: Symbols | null,
    analyse: (v: ReturnType<typeof frameVisitor>) => void,
    declare?: (sym: Symbols) => void,
    key?: readonly Stmt[],
  ): void => {
    const pending: Pending[] = [];
    const v = frameVisitor(new Symbols(parent), pending);
    analyse(v);
    const sym = v.symbols;
    declare?.(sym);
    enter(sym);
    if (key) {
      const names = new Set<string>();
      for (const [name, ref] of sym.refs) if (sym.loads.get(ref)?.[0] === 'undefined') names.add(name);
      if (names.size) declared.set(key, names);
    }
    for (const p of pending) p();
  };

  const macroFrame = (parent: Symbols, m: MacroDef) =>
    frame(
      parent,
      (v) => {
        for (const p of m.params) v.target({ t: 'name', name: p.name, line: m.line }, true);
        for (const p of m.params) v.expr(p.default);
        v.stmts(m.body);
      },
      (sym) => {
        for (const n of readsOf(m.body, ['caller', 'kwargs', 'varargs'])) sym.declareParameter(n);
      },
      m.body,
    );

  frame(null, (v) => v.stmts(body), undefined, body);
  return { undeclared: [...undeclared].sort(), declared };
};
