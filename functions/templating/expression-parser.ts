/** Jinja2's expression grammar (jinja2/parser.py) and the token helpers both grammars use. */
import lexer, { type Token } from 'nunjucks/src/lexer.js';
import nunjucksParser from 'nunjucks/src/parser.js';
import { TemplateSyntaxError } from './exceptions.js';
import type { CallArgs, Expr } from './nodes.js';
import { normInt, PyFloat } from './values.js';

const COMPARE_OPS = new Set(['==', '!=', '<', '>', '<=', '>=']);
const MATH2 = new Set(['*', '/', '//', '%']);

export type Tok = Token;

export class ExpressionParser extends nunjucksParser.Parser {
  // --- tokens -----------------------------------------------------------------------------

  /** Tokens put back, last first: Jinja2's grammar needs more than nunjucks' one-token lookahead. */
  protected readonly pushed: Tok[] = [];
  /** Line of the last token read: where Jinja2 reports an unexpected end of the template. */
  protected lastLine = 1;

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

  protected fail(message: string, tok?: Tok | null): never {
    const line = tok ? tok.lineno + 1 : this.lastLine;
    throw new TemplateSyntaxError(message, line);
  }

  protected peek(): Tok | null {
    return this.peekToken();
  }

  protected next(): Tok {
    const tok = this.nextToken();
    if (!tok) this.fail('unexpected end of template');
    return tok;
  }

  protected isSymbol(tok: Tok | null, value?: string): boolean {
    return !!tok && tok.type === lexer.TOKEN_SYMBOL && (value === undefined || tok.value === value);
  }

  protected isOp(tok: Tok | null, value: string): boolean {
    return !!tok && tok.type === lexer.TOKEN_OPERATOR && tok.value === value;
  }

  protected skipOp(value: string): boolean {
    return this.skipValue(lexer.TOKEN_OPERATOR, value);
  }

  protected expectType(type: string, what: string): Tok {
    const tok = this.nextToken();
    if (!tok || tok.type !== type) this.fail(`expected ${what}, got ${describe(tok)}`, tok ?? undefined);
    return tok;
  }

  protected expectName(): Tok {
    const tok = this.nextToken();
    if (
      !tok ||
      (tok.type !== lexer.TOKEN_SYMBOL && tok.type !== lexer.TOKEN_BOOLEAN && tok.type !== lexer.TOKEN_NONE)
    ) {
      this.fail(`expected name, got ${describe(tok)}`, tok ?? undefined);
    }
    return tok;
  }

  protected blockEnd(): void {
    const tok = this.nextToken();
    if (!tok || tok.type !== lexer.TOKEN_BLOCK_END) {
      this.fail(`expected end of statement block, got ${describe(tok)}`, tok ?? undefined);
    }
    if (tok.value.charAt(0) === '-') this.dropLeadingWhitespace = true;
  }

  protected variableEnd(): void {
    const tok = this.nextToken();
    if (!tok || tok.type !== lexer.TOKEN_VARIABLE_END) {
      this.fail(`expected end of print statement, got ${describe(tok)}`, tok ?? undefined);
    }
    this.dropLeadingWhitespace = tok.value.charAt(0) === '-';
  }

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

  protected parseCondexpr(): Expr {
    let expr1 = this.parseOr();
    while (this.skipSymbol('if')) {
      const test = this.parseOr();
      const else_ = this.skipSymbol('else') ? this.parseCondexpr() : null;
      expr1 = { t: 'cond', test, body: expr1, else_, line: expr1.line };
    }
    return expr1;
  }

  protected parseOr(): Expr {
    let left = this.parseAnd();
    while (this.skipSymbol('or')) left = { t: 'or', left, right: this.parseAnd(), line: left.line };
    return left;
  }

  protected parseAnd(): Expr {
    let left = this.parseNot();
    while (this.skipSymbol('and')) left = { t: 'and', left, right: this.parseNot(), line: left.line };
    return left;
  }

  protected parseNot(): Expr {
    const tok = this.peek();
    if (this.skipSymbol('not')) return { t: 'not', node: this.parseNot(), line: (tok as Tok).lineno + 1 };
    return this.parseCompare();
  }

  protected parseCompare(): Expr {
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

  protected parseMath1(): Expr {
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

  protected parseConcat(): Expr {
    const items = [this.parseMath2()];
    while (this.skip(lexer.TOKEN_TILDE)) items.push(this.parseMath2());
    return items.length === 1 ? (items[0] as Expr) : { t: 'concat', items, line: (items[0] as Expr).line };
  }

  protected parseMath2(): Expr {
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

  protected parsePow(): Expr {
    let left = this.parseUnary();
    while (this.skipOp('**')) left = { t: 'bin', op: '**', left, right: this.parseUnary(), line: left.line };
    return left;
  }

  protected parseUnary(withFilter = true): Expr {
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

  protected parsePrimary(): Expr {
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

  protected parseList(line: number): Expr {
    const items: Expr[] = [];
    while (this.peek()?.type !== lexer.TOKEN_RIGHT_BRACKET) {
      if (items.length) this.expectType(lexer.TOKEN_COMMA, "','");
      if (this.peek()?.type === lexer.TOKEN_RIGHT_BRACKET) break;
      items.push(this.parseExpression());
    }
    this.expectType(lexer.TOKEN_RIGHT_BRACKET, "']'");
    return { t: 'list', items, line };
  }

  protected parseDict(line: number): Expr {
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

  protected parsePostfix(node: Expr): Expr {
    for (;;) {
      const tok = this.peek();
      if (this.isOp(tok, '.') || tok?.type === lexer.TOKEN_LEFT_BRACKET) node = this.parseSubscript(node);
      else if (tok?.type === lexer.TOKEN_LEFT_PAREN) node = this.parseCall(node);
      else return node;
    }
  }

  protected isPipe(): boolean {
    return this.peek()?.type === lexer.TOKEN_PIPE;
  }

  protected parseFilterExpr(node: Expr): Expr {
    for (;;) {
      const tok = this.peek();
      if (tok?.type === lexer.TOKEN_PIPE) node = this.parseFilter(node, false);
      else if (this.isSymbol(tok, 'is')) node = this.parseTest(node);
      else if (tok?.type === lexer.TOKEN_LEFT_PAREN) node = this.parseCall(node);
      else return node;
    }
  }

  protected parseSubscript(node: Expr): Expr {
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

  protected parseSubscribed(): Expr {
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

  protected parseCallArgs(): CallArgs {
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

  protected parseCall(fn: Expr): Expr {
    const line = (this.peek()?.lineno ?? 0) + 1;
    return { t: 'call', fn, ...this.parseCallArgs(), line };
  }

  protected parseDottedName(): string {
    let name = this.expectName().value;
    while (this.isOp(this.peek(), '.')) {
      this.next();
      name += `.${this.expectName().value}`;
    }
    return name;
  }

  protected parseFilter(node: Expr | null, startInline: boolean): Expr {
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

  protected parseTest(node: Expr): Expr {
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

export const describe = (tok: Tok | null | undefined): string => {
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
