/**
 * Jinja2's grammar on nunjucks' tokenizer and parser (nunjucks 3.2.4, pinned).
 *
 * nunjucks reads Jinja2-like text but not Jinja2: its operator precedence differs (`is` below
 * comparisons, `~` below `+`, `*` above `/`), it has no `for … if`, `with`, `autoescape`,
 * `{% filter a|b %}`, tuple targets, Python number and string literals (`1e3`, `1_000`, `'\x41'`)
 * or `foo.0`, and it reads `r/…/` as a regular expression. The subclasses below keep its token
 * stream, whitespace control and data handling and replace the grammar with Jinja2 3.1's
 * (jinja2/parser.py), producing the plain tree of nodes.ts. Nothing is compiled to JavaScript.
 */
import lexer from 'nunjucks/src/lexer.js';
import { TemplateSyntaxError } from './exceptions.js';
import { describe, ExpressionParser, type Tok } from './expression-parser.js';
import { JinjaTokenizer } from './lexer.js';
import type { Expr, MacroDef, Stmt, Target, TemplateAst } from './nodes.js';

class JinjaParser extends ExpressionParser {
  private readonly blocks = new Map<string, Stmt & { t: 'block' }>();
  private hasExtends = false;

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
          text = text.trimStart();
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
          text = text.trimEnd();
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
      else_ = [{ ...(this.parseIf(this.tokens.lineno + 1) as Stmt & { t: 'if' }), elif: true }];
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
    let defaults = false;
    this.expectType(lexer.TOKEN_LEFT_PAREN, "'('");
    while (this.peek()?.type !== lexer.TOKEN_RIGHT_PAREN) {
      if (params.length) this.expectType(lexer.TOKEN_COMMA, "','");
      if (this.peek()?.type === lexer.TOKEN_RIGHT_PAREN) break;
      const name = this.expectName();
      const dflt = this.skipOp('=') ? this.parseExpression() : null;
      if (dflt) defaults = true;
      else if (defaults) this.fail('non-default argument follows default argument', name);
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
    if (this.dropLeadingWhitespace) text = text.trimStart();
    if (m[2] === '-') text = text.trimEnd();
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
}

/** Jinja2's source normalisation: newlines become `\n`, and one trailing newline is dropped. */
const normaliseSource = (source: string): string => {
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
