/**
 * Jinja2's grammar on nunjucks' tokenizer and parser (nunjucks 3.2.4, pinned).
 *
 * nunjucks reads Jinja2-like text but not Jinja2: its operator precedence differs (`is` below
 * comparisons, `~` below `+`, `*` above `/`), it has no `for … if`, `with`, `autoescape`,
 * `{% filter a|b %}`, tuple targets, Python number and string literals (`1e3`, `1_000`, `'\x41'`)
 * or `foo.0`, and it reads `r/…/` as a regular expression. The subclasses below keep its token
 * stream, whitespace control and data handling and replace the grammar with Jinja2 3.1's
 * (jinja2/parser.py), producing the plain tree of ast.ts. Nothing is compiled to JavaScript.
 */
import lexer, { type Token, type Tokenizer } from 'nunjucks/src/lexer.js';
import nunjucksParser from 'nunjucks/src/parser.js';
import type { CallArgs, Expr, MacroDef, Stmt, Target, TemplateAst } from './ast.js';
import { normInt, PyFloat } from './values.js';

/** A template that does not parse; `line` is 1-based. */
export class TemplateSyntaxError extends Error {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(message);
  }
}

const TokenizerBase = Object.getPrototypeOf(lexer.lex('')).constructor as new (
  src: string,
  opts?: object,
) => Tokenizer;

const FLOAT_RE = /(\d+_)*\d+((\.(\d+_)*\d+)?[eE][+-]?(\d+_)*\d+|\.(\d+_)*\d+)/y;
const INT_RE = /0[bB](_?[01])+|0[oO](_?[0-7])+|0[xX](_?[\da-fA-F])+|[1-9](_?\d)*|0(_?0)*/y;
const SIMPLE_ESCAPES: Record<string, string> = {
  n: '\n',
  t: '\t',
  r: '\r',
  '\\': '\\',
  "'": "'",
  '"': '"',
  a: '\x07',
  b: '\b',
  f: '\f',
  v: '\v',
  '\n': '',
};

/** Python's unicode-markupEscape decoding of a string literal's body, as Jinja2's lexer does it. */
const decodePythonString = (body: string, line: number): string => {
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const ch = body[i] as string;
    if (ch !== '\\' || i === body.length - 1) {
      out += ch;
      continue;
    }
    const next = body[i + 1] as string;
    if (next in SIMPLE_ESCAPES) {
      out += SIMPLE_ESCAPES[next];
      i++;
    } else if (next === 'x' || next === 'u' || next === 'U') {
      const size = next === 'x' ? 2 : next === 'u' ? 4 : 8;
      const hex = body.slice(i + 2, i + 2 + size);
      if (hex.length !== size || !/^[0-9a-fA-F]+$/.test(hex)) {
        throw new TemplateSyntaxError(`truncated \\${next} markupEscape in a string`, line);
      }
      const code = Number.parseInt(hex, 16);
      if (code > 0x10ffff) throw new TemplateSyntaxError('illegal Unicode character in a string', line);
      out += String.fromCodePoint(code);
      i += 1 + size;
    } else if (/[0-7]/.test(next)) {
      const oct = /^[0-7]{1,3}/.exec(body.slice(i + 1))?.[0] as string;
      out += String.fromCodePoint(Number.parseInt(oct, 8));
      i += oct.length;
    } else {
      out += ch;
    }
  }
  return out;
};

/** nunjucks' tokenizer with Python's number and string literals, and without `r/regex/`. */
class JinjaTokenizer extends TokenizerBase {
  /** Brackets open in the current tag: like Jinja2's lexer, `}}` and `%}` only end a balanced tag. */
  private open = 0;

  override nextToken(): Token | null {
    const tok = this.codeToken();
    if (tok) {
      if (
        tok.type === lexer.TOKEN_LEFT_PAREN ||
        tok.type === lexer.TOKEN_LEFT_BRACKET ||
        tok.type === lexer.TOKEN_LEFT_CURLY
      ) {
        this.open++;
      } else if (
        tok.type === lexer.TOKEN_RIGHT_PAREN ||
        tok.type === lexer.TOKEN_RIGHT_BRACKET ||
        tok.type === lexer.TOKEN_RIGHT_CURLY
      ) {
        this.open = Math.max(0, this.open - 1);
      }
    }
    return tok;
  }

  private codeToken(): Token | null {
    if (this.in_code && !this.isFinished()) {
      const lineno = this.lineno;
      const colno = this.colno;
      const cur = this.current();
      if (this.open > 0 && (cur === '}' || cur === '%' || cur === '-')) {
        // Inside brackets an end tag's characters are operators (`{{ {'a': {'b': 5}}.a }}`).
        const rest = this.str.slice(this.index, this.index + 4);
        if (/^(-?\}\}|-?%\})/.test(rest)) {
          this.forward();
          const type = cur === '}' ? lexer.TOKEN_RIGHT_CURLY : lexer.TOKEN_OPERATOR;
          return { type, value: cur, lineno, colno };
        }
      }
      if (cur >= '0' && cur <= '9') {
        const afterDot = this.str[this.index - 1] === '.';
        FLOAT_RE.lastIndex = this.index;
        const f = afterDot ? null : FLOAT_RE.exec(this.str);
        if (f) {
          this.forwardN(f[0].length);
          return { type: lexer.TOKEN_FLOAT, value: f[0].replace(/_/g, ''), lineno, colno };
        }
        INT_RE.lastIndex = this.index;
        const n = INT_RE.exec(this.str);
        if (n) {
          this.forwardN(n[0].length);
          return { type: lexer.TOKEN_INT, value: n[0].replace(/_/g, ''), lineno, colno };
        }
      }
      if (cur === '"' || cur === "'") {
        const re = cur === '"' ? /"([^"\\]*(?:\\[\s\S][^"\\]*)*)"/y : /'([^'\\]*(?:\\[\s\S][^'\\]*)*)'/y;
        re.lastIndex = this.index;
        const m = re.exec(this.str);
        if (!m) throw new TemplateSyntaxError('unexpected end of string', lineno + 1);
        this.forwardN(m[0].length);
        return {
          type: lexer.TOKEN_STRING,
          value: decodePythonString(m[1] as string, lineno + 1),
          lineno,
          colno,
        };
      }
      if (cur === 'r' && this.str[this.index + 1] === '/') {
        this.forward();
        return { type: lexer.TOKEN_SYMBOL, value: 'r', lineno, colno };
      }
      if (/[$?;@&^`\\]/.test(cur)) {
        throw new TemplateSyntaxError(`unexpected char '${cur}'`, lineno + 1);
      }
    }
    return super.nextToken();
  }
}

const COMPARE_OPS = new Set(['==', '!=', '<', '>', '<=', '>=']);
const MATH2 = new Set(['*', '/', '//', '%']);

type Tok = Token;

export class JinjaParser extends nunjucksParser.Parser {
  private readonly blocks = new Map<string, Stmt & { t: 'block' }>();
  private hasExtends = false;

  // --- tokens -----------------------------------------------------------------------------

  /** Tokens put back, last first: Jinja2's grammar needs more than nunjucks' one-token lookahead. */
  private readonly pushed: Tok[] = [];
  /** Line of the last token read: where Jinja2 reports an unexpected end of the template. */
  private lastLine = 1;

  override nextToken(withWhitespace?: boolean): Tok | null {
    while (this.pushed.length) {
      const tok = this.pushed.pop() as Tok;
      if (withWhitespace || tok.type !== lexer.TOKEN_WHITESPACE) return tok;
    }
    const tok = super.nextToken(withWhitespace);
    if (tok) this.lastLine = tok.lineno + 1;
    return tok;
  }

  override peekToken(): Tok | null {
    const tok = this.nextToken();
    if (tok) this.pushed.push(tok);
    return tok;
  }

  override pushToken(tok: Tok | null): void {
    if (tok) this.pushed.push(tok);
  }

  private fail(message: string, tok?: Tok | null): never {
    const line = tok ? tok.lineno + 1 : this.lastLine;
    throw new TemplateSyntaxError(message, line);
  }

  private peek(): Tok | null {
    return this.peekToken();
  }

  private next(): Tok {
    const tok = this.nextToken();
    if (!tok) this.fail('unexpected end of template');
    return tok;
  }

  private isSymbol(tok: Tok | null, value?: string): boolean {
    return !!tok && tok.type === lexer.TOKEN_SYMBOL && (value === undefined || tok.value === value);
  }

  private isOp(tok: Tok | null, value: string): boolean {
    return !!tok && tok.type === lexer.TOKEN_OPERATOR && tok.value === value;
  }

  private skipOp(value: string): boolean {
    return this.skipValue(lexer.TOKEN_OPERATOR, value);
  }

  private expectType(type: string, what: string): Tok {
    const tok = this.nextToken();
    if (!tok || tok.type !== type) this.fail(`expected ${what}, got ${describe(tok)}`, tok ?? undefined);
    return tok;
  }

  private expectName(): Tok {
    const tok = this.nextToken();
    if (
      !tok ||
      (tok.type !== lexer.TOKEN_SYMBOL && tok.type !== lexer.TOKEN_BOOLEAN && tok.type !== lexer.TOKEN_NONE)
    ) {
      this.fail(`expected name, got ${describe(tok)}`, tok ?? undefined);
    }
    return tok;
  }

  private blockEnd(): void {
    const tok = this.nextToken();
    if (!tok || tok.type !== lexer.TOKEN_BLOCK_END) {
      this.fail(`expected end of statement block, got ${describe(tok)}`, tok ?? undefined);
    }
    if (tok.value.charAt(0) === '-') this.dropLeadingWhitespace = true;
  }

  private variableEnd(): void {
    const tok = this.nextToken();
    if (!tok || tok.type !== lexer.TOKEN_VARIABLE_END) {
      this.fail(`expected end of print statement, got ${describe(tok)}`, tok ?? undefined);
    }
    this.dropLeadingWhitespace = tok.value.charAt(0) === '-';
  }

  // --- template -----------------------------------------------------------------------------

  parseTemplate(): TemplateAst {
    const body = this.subparse(null);
    return { body, blocks: this.blocks, extends: this.hasExtends };
  }

  /** Statements until one of `end` (left as the next token) or the end of the template. */
  private subparse(end: readonly string[] | null): Stmt[] {
    const body: Stmt[] = [];
    for (;;) {
      const tok = this.nextToken();
      if (!tok) {
        if (end) this.fail(`unexpected end of template; expected '${end.join("' or '")}'`);
        return body;
      }
      if (tok.type === lexer.TOKEN_DATA) {
        let text = tok.value;
        if (this.dropLeadingWhitespace) {
          text = text.replace(/^\s*/, '');
          this.dropLeadingWhitespace = false;
        }
        const following = this.peekToken();
        const fv = following?.value ?? '';
        if (
          following &&
          ((following.type === lexer.TOKEN_BLOCK_START && fv.endsWith('-')) ||
            (following.type === lexer.TOKEN_VARIABLE_START && fv.charAt(2) === '-') ||
            (following.type === lexer.TOKEN_COMMENT && fv.charAt(2) === '-'))
        ) {
          text = text.replace(/\s*$/, '');
        }
        if (text) body.push({ t: 'data', text, line: tok.lineno + 1 });
      } else if (tok.type === lexer.TOKEN_COMMENT) {
        this.dropLeadingWhitespace = tok.value.charAt(tok.value.length - 3) === '-';
      } else if (tok.type === lexer.TOKEN_VARIABLE_START) {
        this.dropLeadingWhitespace = false;
        const expr = this.parseTuple();
        this.variableEnd();
        body.push({ t: 'output', expr, line: expr.line });
      } else if (tok.type === lexer.TOKEN_BLOCK_START) {
        this.dropLeadingWhitespace = false;
        const name = this.peekToken();
        if (!this.isSymbol(name)) this.fail('tag name expected', name);
        if (end?.includes((name as Tok).value)) return body;
        const stmt = this.parseStatement(end);
        if (stmt) body.push(stmt);
      } else {
        this.fail(`unexpected ${describe(tok)}`, tok);
      }
    }
  }

  private parseStatement(end: readonly string[] | null): Stmt | null {
    const tok = this.next();
    const line = tok.lineno + 1;
    switch (tok.value) {
      case 'for':
        return this.parseFor(line);
      case 'if':
        return this.parseIf(line);
      case 'set':
        return this.parseSet(line);
      case 'with':
        return this.parseWith(line);
      case 'macro':
        return this.parseMacro(line);
      case 'call':
        return this.parseCallBlock(line);
      case 'filter':
        return this.parseFilterBlock(line);
      case 'block':
        return this.parseBlock(line);
      case 'autoescape':
        return this.parseAutoescape(line);
      case 'raw':
        return this.parseRaw(line);
      case 'print': {
        const expr = this.parseTuple();
        this.blockEnd();
        return { t: 'output', expr, line };
      }
      case 'extends':
      case 'include':
      case 'import':
      case 'from':
        return this.parseLoad(tok.value, line);
      default: {
        const hint = end ? ` Jinja was looking for '${end.join("' or '")}'.` : '';
        this.fail(`Encountered unknown tag '${tok.value}'.${hint}`, tok);
      }
    }
  }

  /** Consumes an end tag (its name already peeked by subparse) and returns its name. */
  private endTag(): string {
    return this.next().value;
  }

  private parseFor(line: number): Stmt {
    const target = this.parseAssignTarget(['in']);
    if (!this.skipSymbol('in')) this.fail("expected 'in'", this.peek());
    const iter = this.parseTuple({ withCondexpr: false, endRules: ['recursive'] });
    const test = this.skipSymbol('if') ? this.parseExpression() : null;
    const recursive = this.skipSymbol('recursive');
    this.blockEnd();
    const body = this.subparse(['endfor', 'else']);
    let else_: Stmt[] = [];
    if (this.endTag() === 'else') {
      this.blockEnd();
      else_ = this.subparse(['endfor']);
      this.endTag();
    }
    this.blockEnd();
    return { t: 'for', target, iter, test, recursive, body, else_, line };
  }

  private parseIf(line: number): Stmt {
    const test = this.parseTuple({ withCondexpr: false });
    this.blockEnd();
    const body = this.subparse(['elif', 'else', 'endif']);
    const tag = this.endTag();
    let else_: Stmt[] = [];
    if (tag === 'elif') {
      else_ = [this.parseIf(this.tokens.lineno + 1)];
      return { t: 'if', test, body, else_, line };
    }
    if (tag === 'else') {
      this.blockEnd();
      else_ = this.subparse(['endif']);
      this.endTag();
    }
    this.blockEnd();
    return { t: 'if', test, body, else_, line };
  }

  private parseSet(line: number): Stmt {
    const target = this.parseAssignTarget(null, true);
    if (this.skipOp('=')) {
      const expr = this.parseTuple();
      this.blockEnd();
      return { t: 'set', target, expr, line };
    }
    const filter = this.isPipe() ? this.parseFilter(null, false) : null;
    this.blockEnd();
    const body = this.subparse(['endset']);
    this.endTag();
    this.blockEnd();
    return { t: 'setblock', target, filter, body, line };
  }

  private parseWith(line: number): Stmt {
    const targets: Target[] = [];
    const values: Expr[] = [];
    while (this.peek()?.type !== lexer.TOKEN_BLOCK_END) {
      if (targets.length) this.expectType(lexer.TOKEN_COMMA, "','");
      targets.push(this.parseAssignTarget(null));
      if (!this.skipOp('=')) this.fail("expected '='", this.peek());
      values.push(this.parseExpression());
    }
    this.blockEnd();
    const body = this.subparse(['endwith']);
    this.endTag();
    this.blockEnd();
    return { t: 'with', targets, values, body, line };
  }

  private parseSignature(): MacroDef['params'] {
    const params: { name: string; default: Expr | null }[] = [];
    this.expectType(lexer.TOKEN_LEFT_PAREN, "'('");
    while (this.peek()?.type !== lexer.TOKEN_RIGHT_PAREN) {
      if (params.length) this.expectType(lexer.TOKEN_COMMA, "','");
      if (this.peek()?.type === lexer.TOKEN_RIGHT_PAREN) break;
      const name = this.expectName();
      const dflt = this.skipOp('=') ? this.parseExpression() : null;
      if (!dflt && params.some((p) => p.default))
        this.fail('non-default argument follows default argument', name);
      params.push({ name: name.value, default: dflt });
    }
    this.next();
    return params;
  }

  private parseMacro(line: number): Stmt {
    const name = this.expectName().value;
    const params = this.parseSignature();
    this.blockEnd();
    const body = this.subparse(['endmacro']);
    this.endTag();
    this.blockEnd();
    return { t: 'macro', name, params, body, line };
  }

  private parseCallBlock(line: number): Stmt {
    const params = this.peek()?.type === lexer.TOKEN_LEFT_PAREN ? this.parseSignature() : [];
    const call = this.parseExpression();
    if (call.t !== 'call') this.fail('expected call', this.peek());
    this.blockEnd();
    const body = this.subparse(['endcall']);
    this.endTag();
    this.blockEnd();
    return { t: 'callblock', call, macro: { name: 'caller', params, body, line }, line };
  }

  private parseFilterBlock(line: number): Stmt {
    const filter = this.parseFilter(null, true);
    this.blockEnd();
    const body = this.subparse(['endfilter']);
    this.endTag();
    this.blockEnd();
    return { t: 'filterblock', filter, body, line };
  }

  private parseBlock(line: number): Stmt {
    const nameTok = this.expectName();
    const name = nameTok.value;
    if (this.blocks.has(name)) this.fail(`block '${name}' defined twice`, nameTok);
    const scoped = this.skipSymbol('scoped');
    this.skipSymbol('required');
    this.blockEnd();
    const body = this.subparse(['endblock']);
    this.endTag();
    if (this.isSymbol(this.peek())) {
      const closing = this.next();
      if (closing.value !== name) this.fail(`mismatching name of block: '${closing.value}'`, closing);
    }
    this.blockEnd();
    const block = { t: 'block' as const, name, scoped, body, line };
    this.blocks.set(name, block);
    return block;
  }

  private parseAutoescape(line: number): Stmt {
    const expr = this.parseExpression();
    this.blockEnd();
    const body = this.subparse(['endautoescape']);
    this.endTag();
    this.blockEnd();
    return { t: 'autoescape', expr, body, line };
  }

  private parseRaw(line: number): Stmt {
    this.blockEnd();
    const m = this.tokens._extractRegex(/^([\s\S]*?)\{%(-?)\s*endraw\s*(-?)%\}/);
    if (!m) this.fail('Missing end of raw directive');
    let text = m[1] as string;
    if (this.dropLeadingWhitespace) text = text.replace(/^\s*/, '');
    if (m[2] === '-') text = text.replace(/\s*$/, '');
    this.dropLeadingWhitespace = m[3] === '-';
    return { t: 'data', text, line };
  }

  private parseLoad(what: string, line: number): Stmt {
    const exprs: Expr[] = [];
    const names: string[] = [];
    if (what === 'extends') this.hasExtends = true;
    let afterImport = false;
    while (this.peek() && this.peek()?.type !== lexer.TOKEN_BLOCK_END) {
      const tok = this.peek() as Tok;
      if (tok.type === lexer.TOKEN_COMMA || this.isSymbol(tok)) {
        this.next();
        if (tok.value === 'import') afterImport = true;
        else if (tok.value === 'as' && this.isSymbol(this.peek())) {
          if (afterImport && names.length) names.pop();
          names.push(this.next().value);
        } else if (
          afterImport &&
          what === 'from' &&
          tok.type === lexer.TOKEN_SYMBOL &&
          !['with', 'without', 'context'].includes(tok.value)
        ) {
          names.push(tok.value);
        }
        continue;
      }
      exprs.push(this.parsePrimary());
    }
    this.blockEnd();
    return { t: 'load', what, exprs, names, line };
  }

  // --- targets ------------------------------------------------------------------------------

  private parseAssignTarget(endRules: readonly string[] | null, withNamespace = false): Target {
    const line = (this.peek()?.lineno ?? 0) + 1;
    // Jinja2's parse_tuple(simplified=True): primaries separated by commas, up to the end rules.
    const items: Target[] = [];
    let isTuple = false;
    for (;;) {
      if (items.length) this.expectType(lexer.TOKEN_COMMA, "','");
      const t = this.peek();
      if (
        !t ||
        t.type === lexer.TOKEN_BLOCK_END ||
        t.type === lexer.TOKEN_VARIABLE_END ||
        t.type === lexer.TOKEN_RIGHT_PAREN ||
        (endRules && this.isSymbol(t) && endRules.includes(t.value))
      ) {
        break;
      }
      items.push(this.parseTargetPrimary(withNamespace));
      if (this.peek()?.type === lexer.TOKEN_COMMA) isTuple = true;
      else break;
    }
    if (!isTuple) {
      if (items.length) return items[0] as Target;
      this.fail(`Expected an expression, got ${describe(this.peek())}`, this.peek());
    }
    return { t: 'tuple', items, line };
  }

  /**
   * One assignment target: a name, `ns.attr` where `{% set %}` allows it, or a parenthesized
   * (possibly nested) tuple of names.
   */
  private parseTargetPrimary(withNamespace = false): Target {
    const t = this.next();
    const line = t.lineno + 1;
    if (t.type === lexer.TOKEN_LEFT_PAREN) {
      const items: Target[] = [];
      let isTuple = false;
      for (;;) {
        if (items.length) this.expectType(lexer.TOKEN_COMMA, "','");
        if (this.peek()?.type === lexer.TOKEN_RIGHT_PAREN) break;
        items.push(this.parseTargetPrimary());
        if (this.peek()?.type === lexer.TOKEN_COMMA) isTuple = true;
        else break;
      }
      this.expectType(lexer.TOKEN_RIGHT_PAREN, "')'");
      if (!isTuple && items.length) return items[0] as Target;
      return { t: 'tuple', items, line };
    }
    if (t.type !== lexer.TOKEN_SYMBOL && t.type !== lexer.TOKEN_BOOLEAN && t.type !== lexer.TOKEN_NONE) {
      this.fail(`can't assign to ${describe(t)}`, t);
    }
    if (['true', 'false', 'none', 'True', 'False', 'None'].includes(t.value)) {
      this.fail(`can't assign to '${t.value}'`, t);
    }
    if (withNamespace && this.isOp(this.peek(), '.')) {
      this.next();
      const attr = this.expectName();
      return { t: 'nsattr', ns: t.value, attr: attr.value, line };
    }
    return { t: 'name', name: t.value, line };
  }

  // --- expressions --------------------------------------------------------------------------

  parseTuple(
    opts: {
      withCondexpr?: boolean;
      endRules?: readonly string[];
      explicitParens?: boolean;
      simplified?: boolean;
    } = {},
  ): Expr {
    const { withCondexpr = true, endRules = [], explicitParens = false, simplified = false } = opts;
    const start = this.peek();
    const line = (start?.lineno ?? 0) + 1;
    const parse = () =>
      simplified ? this.parsePrimary() : withCondexpr ? this.parseExpression() : this.parseOr();
    const items: Expr[] = [];
    let isTuple = false;
    for (;;) {
      if (items.length) this.expectType(lexer.TOKEN_COMMA, "','");
      const tok = this.peek();
      if (
        !tok ||
        tok.type === lexer.TOKEN_VARIABLE_END ||
        tok.type === lexer.TOKEN_BLOCK_END ||
        tok.type === lexer.TOKEN_RIGHT_PAREN ||
        (this.isSymbol(tok) && endRules.includes(tok.value))
      ) {
        break;
      }
      items.push(parse());
      if (this.peek()?.type === lexer.TOKEN_COMMA) isTuple = true;
      else break;
    }
    if (!isTuple) {
      if (items.length) return items[0] as Expr;
      if (!explicitParens) this.fail(`Expected an expression, got ${describe(this.peek())}`, this.peek());
    }
    return { t: 'tuple', items, line };
  }

  parseExpression(withCondexpr = true): Expr {
    return withCondexpr ? this.parseCondexpr() : this.parseOr();
  }

  private parseCondexpr(): Expr {
    let expr1 = this.parseOr();
    while (this.skipSymbol('if')) {
      const test = this.parseOr();
      const else_ = this.skipSymbol('else') ? this.parseCondexpr() : null;
      expr1 = { t: 'cond', test, body: expr1, else_, line: expr1.line };
    }
    return expr1;
  }

  private parseOr(): Expr {
    let left = this.parseAnd();
    while (this.skipSymbol('or')) left = { t: 'or', left, right: this.parseAnd(), line: left.line };
    return left;
  }

  private parseAnd(): Expr {
    let left = this.parseNot();
    while (this.skipSymbol('and')) left = { t: 'and', left, right: this.parseNot(), line: left.line };
    return left;
  }

  private parseNot(): Expr {
    const tok = this.peek();
    if (this.skipSymbol('not')) return { t: 'not', node: this.parseNot(), line: (tok as Tok).lineno + 1 };
    return this.parseCompare();
  }

  private parseCompare(): Expr {
    const expr = this.parseMath1();
    const ops: [string, Expr][] = [];
    for (;;) {
      const tok = this.peek();
      if (tok?.type === lexer.TOKEN_OPERATOR && COMPARE_OPS.has(tok.value)) {
        this.next();
        ops.push([tok.value, this.parseMath1()]);
      } else if (this.skipSymbol('in')) {
        ops.push(['in', this.parseMath1()]);
      } else if (this.isSymbol(tok, 'not')) {
        const notTok = this.next();
        if (this.skipSymbol('in')) {
          ops.push(['notin', this.parseMath1()]);
        } else {
          this.pushToken(notTok);
          break;
        }
      } else {
        break;
      }
    }
    return ops.length ? { t: 'compare', expr, ops, line: expr.line } : expr;
  }

  private parseMath1(): Expr {
    let left = this.parseConcat();
    for (;;) {
      const tok = this.peek();
      if (this.isOp(tok, '+') || this.isOp(tok, '-')) {
        this.next();
        left = { t: 'bin', op: (tok as Tok).value, left, right: this.parseConcat(), line: left.line };
      } else {
        return left;
      }
    }
  }

  private parseConcat(): Expr {
    const items = [this.parseMath2()];
    while (this.skip(lexer.TOKEN_TILDE)) items.push(this.parseMath2());
    return items.length === 1 ? (items[0] as Expr) : { t: 'concat', items, line: (items[0] as Expr).line };
  }

  private parseMath2(): Expr {
    let left = this.parsePow();
    for (;;) {
      const tok = this.peek();
      if (tok?.type === lexer.TOKEN_OPERATOR && MATH2.has(tok.value)) {
        this.next();
        left = { t: 'bin', op: tok.value, left, right: this.parsePow(), line: left.line };
      } else {
        return left;
      }
    }
  }

  private parsePow(): Expr {
    let left = this.parseUnary();
    while (this.skipOp('**')) left = { t: 'bin', op: '**', left, right: this.parseUnary(), line: left.line };
    return left;
  }

  private parseUnary(withFilter = true): Expr {
    const tok = this.peek();
    const line = (tok?.lineno ?? 0) + 1;
    let node: Expr;
    if (this.isOp(tok, '-')) {
      this.next();
      node = { t: 'neg', node: this.parseUnary(false), line };
    } else if (this.isOp(tok, '+')) {
      this.next();
      node = { t: 'pos', node: this.parseUnary(false), line };
    } else {
      node = this.parsePrimary();
    }
    node = this.parsePostfix(node);
    if (withFilter) node = this.parseFilterExpr(node);
    return node;
  }

  private parsePrimary(): Expr {
    const tok = this.nextToken();
    if (!tok) this.fail('unexpected end of template');
    const line = tok.lineno + 1;
    switch (tok.type) {
      case lexer.TOKEN_SYMBOL:
      case lexer.TOKEN_BOOLEAN:
      case lexer.TOKEN_NONE: {
        const v = tok.value;
        if (v === 'true' || v === 'True') return { t: 'const', value: true, line };
        if (v === 'false' || v === 'False') return { t: 'const', value: false, line };
        if (v === 'none' || v === 'None') return { t: 'const', value: null, line };
        if (!/^[A-Za-z_\u00c0-\uffff][\w\u00c0-\uffff]*$/.test(v)) this.fail(`unexpected '${v}'`, tok);
        return { t: 'name', name: v, line };
      }
      case lexer.TOKEN_STRING: {
        let s = tok.value;
        while (this.peek()?.type === lexer.TOKEN_STRING) s += this.next().value;
        return { t: 'const', value: s, line };
      }
      case lexer.TOKEN_INT:
        // Python ints are exact: a literal beyond 2^53 is a bigint (BigInt reads 0x, 0o and 0b too).
        return { t: 'const', value: normInt(BigInt(tok.value)), line };
      case lexer.TOKEN_FLOAT:
        return { t: 'const', value: new PyFloat(Number(tok.value)), line };
      case lexer.TOKEN_LEFT_PAREN: {
        const node = this.parseTuple({ explicitParens: true });
        this.expectType(lexer.TOKEN_RIGHT_PAREN, "')'");
        return node;
      }
      case lexer.TOKEN_LEFT_BRACKET:
        return this.parseList(line);
      case lexer.TOKEN_LEFT_CURLY:
        return this.parseDict(line);
      default:
        this.fail(`unexpected ${describe(tok)}`, tok);
    }
  }

  private parseList(line: number): Expr {
    const items: Expr[] = [];
    while (this.peek()?.type !== lexer.TOKEN_RIGHT_BRACKET) {
      if (items.length) this.expectType(lexer.TOKEN_COMMA, "','");
      if (this.peek()?.type === lexer.TOKEN_RIGHT_BRACKET) break;
      items.push(this.parseExpression());
    }
    this.expectType(lexer.TOKEN_RIGHT_BRACKET, "']'");
    return { t: 'list', items, line };
  }

  private parseDict(line: number): Expr {
    const pairs: [Expr, Expr][] = [];
    while (this.peek()?.type !== lexer.TOKEN_RIGHT_CURLY) {
      if (pairs.length) this.expectType(lexer.TOKEN_COMMA, "','");
      if (this.peek()?.type === lexer.TOKEN_RIGHT_CURLY) break;
      const key = this.parseExpression();
      this.expectType(lexer.TOKEN_COLON, "':'");
      pairs.push([key, this.parseExpression()]);
    }
    this.expectType(lexer.TOKEN_RIGHT_CURLY, "'}'");
    return { t: 'dict', pairs, line };
  }

  private parsePostfix(node: Expr): Expr {
    for (;;) {
      const tok = this.peek();
      if (this.isOp(tok, '.') || tok?.type === lexer.TOKEN_LEFT_BRACKET) node = this.parseSubscript(node);
      else if (tok?.type === lexer.TOKEN_LEFT_PAREN) node = this.parseCall(node);
      else return node;
    }
  }

  private isPipe(): boolean {
    return this.peek()?.type === lexer.TOKEN_PIPE;
  }

  private parseFilterExpr(node: Expr): Expr {
    for (;;) {
      const tok = this.peek();
      if (tok?.type === lexer.TOKEN_PIPE) node = this.parseFilter(node, false);
      else if (this.isSymbol(tok, 'is')) node = this.parseTest(node);
      else if (tok?.type === lexer.TOKEN_LEFT_PAREN) node = this.parseCall(node);
      else return node;
    }
  }

  private parseSubscript(node: Expr): Expr {
    const tok = this.next();
    const line = tok.lineno + 1;
    if (tok.type === lexer.TOKEN_OPERATOR) {
      const attr = this.nextToken();
      if (
        attr &&
        (attr.type === lexer.TOKEN_SYMBOL ||
          attr.type === lexer.TOKEN_BOOLEAN ||
          attr.type === lexer.TOKEN_NONE)
      ) {
        return { t: 'getattr', obj: node, name: attr.value, line };
      }
      if (attr?.type === lexer.TOKEN_INT) {
        return { t: 'getitem', obj: node, key: { t: 'const', value: parseInt(attr.value, 10), line }, line };
      }
      this.fail('expected name or number', attr);
    }
    const args: Expr[] = [];
    while (this.peek()?.type !== lexer.TOKEN_RIGHT_BRACKET) {
      if (args.length) this.expectType(lexer.TOKEN_COMMA, "','");
      args.push(this.parseSubscribed());
    }
    this.expectType(lexer.TOKEN_RIGHT_BRACKET, "']'");
    const key: Expr = args.length === 1 ? (args[0] as Expr) : { t: 'tuple', items: args, line };
    return { t: 'getitem', obj: node, key, line };
  }

  private parseSubscribed(): Expr {
    const tok = this.peek();
    const line = (tok?.lineno ?? 0) + 1;
    const endOfPart = () => {
      const t = this.peek()?.type;
      return t === lexer.TOKEN_RIGHT_BRACKET || t === lexer.TOKEN_COMMA || t === lexer.TOKEN_COLON;
    };
    let start: Expr | null = null;
    if (tok?.type === lexer.TOKEN_COLON) {
      this.next();
    } else {
      const node = this.parseExpression();
      if (this.peek()?.type !== lexer.TOKEN_COLON) return node;
      this.next();
      start = node;
    }
    const stop = endOfPart() ? null : this.parseExpression();
    let step: Expr | null = null;
    if (this.skip(lexer.TOKEN_COLON)) step = endOfPart() ? null : this.parseExpression();
    return { t: 'slice', start, stop, step, line };
  }

  private parseCallArgs(): CallArgs {
    this.expectType(lexer.TOKEN_LEFT_PAREN, "'('");
    const args: Expr[] = [];
    const kwargs: [string, Expr][] = [];
    let dynArgs: Expr | null = null;
    let dynKwargs: Expr | null = null;
    let first = true;
    while (this.peek()?.type !== lexer.TOKEN_RIGHT_PAREN) {
      if (!first) {
        this.expectType(lexer.TOKEN_COMMA, "','");
        if (this.peek()?.type === lexer.TOKEN_RIGHT_PAREN) break;
      }
      first = false;
      const tok = this.peek();
      if (this.isOp(tok, '*')) {
        this.next();
        dynArgs = this.parseExpression();
      } else if (this.isOp(tok, '**')) {
        this.next();
        dynKwargs = this.parseExpression();
      } else if (this.isSymbol(tok)) {
        const nameTok = this.next();
        if (this.isOp(this.peek(), '=')) {
          this.next();
          kwargs.push([nameTok.value, this.parseExpression()]);
          continue;
        }
        this.pushToken(nameTok);
        if (kwargs.length || dynKwargs) this.fail('positional argument follows keyword argument', tok);
        args.push(this.parseExpression());
      } else {
        if (kwargs.length || dynKwargs) this.fail('positional argument follows keyword argument', tok);
        args.push(this.parseExpression());
      }
    }
    this.next();
    return { args, kwargs, dynArgs, dynKwargs };
  }

  private parseCall(fn: Expr): Expr {
    const line = (this.peek()?.lineno ?? 0) + 1;
    return { t: 'call', fn, ...this.parseCallArgs(), line };
  }

  private parseDottedName(): string {
    let name = this.expectName().value;
    while (this.isOp(this.peek(), '.')) {
      this.next();
      name += `.${this.expectName().value}`;
    }
    return name;
  }

  private parseFilter(node: Expr | null, startInline: boolean): Expr {
    let inline = startInline;
    let current = node;
    while (inline || this.isPipe()) {
      if (!inline) this.next();
      inline = false;
      const tok = this.peek();
      const line = (tok?.lineno ?? 0) + 1;
      const name = this.parseDottedName();
      const call: CallArgs =
        this.peek()?.type === lexer.TOKEN_LEFT_PAREN
          ? this.parseCallArgs()
          : { args: [], kwargs: [], dynArgs: null, dynKwargs: null };
      current = { t: 'filter', node: current, name, ...call, line };
    }
    return current as Expr;
  }

  private parseTest(node: Expr): Expr {
    const isTok = this.next();
    const line = isTok.lineno + 1;
    const negated = this.skipSymbol('not');
    const name = this.parseDottedName();
    let call: CallArgs = { args: [], kwargs: [], dynArgs: null, dynKwargs: null };
    const tok = this.peek();
    if (tok?.type === lexer.TOKEN_LEFT_PAREN) {
      call = this.parseCallArgs();
    } else if (
      tok &&
      [
        lexer.TOKEN_SYMBOL,
        lexer.TOKEN_BOOLEAN,
        lexer.TOKEN_NONE,
        lexer.TOKEN_STRING,
        lexer.TOKEN_INT,
        lexer.TOKEN_FLOAT,
        lexer.TOKEN_LEFT_BRACKET,
        lexer.TOKEN_LEFT_CURLY,
      ].includes(tok.type) &&
      !(this.isSymbol(tok) && ['else', 'or', 'and', 'if', 'in', 'not', 'recursive'].includes(tok.value))
    ) {
      if (this.isSymbol(tok, 'is')) this.fail('You cannot chain multiple tests with is', tok);
      const arg = this.parsePostfix(this.parsePrimary());
      call = { args: [arg], kwargs: [], dynArgs: null, dynKwargs: null };
    }
    const test: Expr = { t: 'test', node, name, ...call, line };
    return negated ? { t: 'not', node: test, line } : test;
  }
}

const describe = (tok: Tok | null | undefined): string => {
  if (!tok) return 'end of template';
  switch (tok.type) {
    case lexer.TOKEN_BLOCK_END:
      return 'end of statement block';
    case lexer.TOKEN_VARIABLE_END:
      return 'end of print statement';
    case lexer.TOKEN_STRING:
      return 'string';
    default:
      return `'${tok.value}'`;
  }
};

/** Jinja2's source normalisation: newlines become `\n`, and one trailing newline is dropped. */
export const normaliseSource = (source: string): string => {
  const text = source.replace(/\r\n|\r/g, '\n');
  return text.endsWith('\n') ? text.slice(0, -1) : text;
};

export const parse = (source: string): TemplateAst => {
  try {
    const parser = new JinjaParser(new JinjaTokenizer(normaliseSource(source)));
    return parser.parseTemplate();
  } catch (e) {
    if (e instanceof TemplateSyntaxError) throw e;
    if (e instanceof RangeError) throw new TemplateSyntaxError('the template is nested too deeply', 1);
    // nunjucks' own tokenizer errors (an unterminated comment, say) have no line: take the message.
    const message = e instanceof Error ? e.message : 'template syntax error';
    throw new TemplateSyntaxError(message.split('\n').pop()?.trim() || 'template syntax error', 1);
  }
};
