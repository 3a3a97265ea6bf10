/**
 * Jinja2's lexer (jinja2/lexer.py) as a subclass of nunjucks' tokenizer (nunjucks 3.2.4, pinned):
 * it keeps nunjucks' tag, data and whitespace-control handling and reads Python's number and
 * string literals, bracket-balanced tag ends, and no `r/regex/`.
 */

import lexer, { type Token, type Tokenizer } from 'nunjucks/src/lexer.js';
import { TemplateSyntaxError } from './exceptions.js';
import { lookupUnicodeName } from './unicode-names.js';

const TokenizerBase = Object.getPrototypeOf(lexer.lex('')).constructor as new (
  src: string,
  opts?: object,
) => Tokenizer;

/** nunjucks' whitespace and delimiters in code: a name runs up to one of them. */
const WHITESPACE = /[ \n\t\r\u00a0]+/y;
const SYMBOL = /[^ \n\t\r\u00a0()[\]{}%*\-+~/#,:|.<>=!]+/y;
/** Where text ends: a tag, a comment, or a stray comment end (an error, as in nunjucks). */
const DATA_END = /\{[{%#]|#\}/g;
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
    } else if (next === 'N') {
      // Python's \N{NAME}: the character by its Unicode name.
      const end = body[i + 2] === '{' ? body.indexOf('}', i + 3) : -1;
      if (end < 0 || end === i + 3) throw new TemplateSyntaxError('malformed \\N character escape', line);
      const named = lookupUnicodeName(body.slice(i + 3, end));
      if (named === undefined) throw new TemplateSyntaxError('unknown Unicode character name', line);
      out += named;
      i = end;
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
export class JinjaTokenizer extends TokenizerBase {
  /** Brackets open in the current tag: like Jinja2's lexer, `}}` and `%}` only end a balanced tag. */
  private open = 0;
  /** The last token opened a tag: a `+` right after `{%` or `{{` is Jinja2's lstrip marker. */
  private opened = false;
  /** Inside `{% … %}` (not `{{ … }}`), where `+%}` ends the tag. */
  private inBlock = false;

  // nunjucks moves one character at a time, building each token by concatenating characters:
  // linear, but ~0.5 µs a character (a 1 MiB template took 200-450 ms to tokenize). These do the
  // same moves a span at a time (indexOf, one slice), with the same line and column counts.

  override forwardN(n: number): void {
    const str = this.str;
    const to = this.index + n;
    for (let i = this.index; i < to; i++) {
      if (str.charCodeAt(i) === 10) {
        this.lineno++;
        this.colno = 0;
      } else {
        this.colno++;
      }
    }
    this.index = to;
  }

  override forward(): void {
    this.forwardN(1);
  }

  override _matches(str: string): boolean | null {
    if (this.index + str.length > this.len) return null;
    return this.str.startsWith(str, this.index);
  }

  override _extractMatching(breakOnMatch: boolean, charString: string): string | null {
    if (this.isFinished()) return null;
    const start = this.index;
    let end = start;
    const str = this.str;
    const len = this.len;
    while (end < len && charString.includes(str.charAt(end)) !== breakOnMatch) end++;
    if (end === start) return '';
    this.forwardN(end - start);
    return str.slice(start, end);
  }

  /**
   * Text and comments between tags, as nunjucks reads them (a `#}` in text is an error, a comment
   * ends at its first `#}`), found with one search instead of a step per `{` and `#`.
   */
  private dataToken(): Token | null {
    if (this.isFinished()) return null;
    const { lineno, colno } = this;
    for (const start of ['{%-', '{%', '{{-', '{{']) {
      if (this.str.startsWith(start, this.index)) {
        this.forwardN(start.length);
        this.in_code = true;
        const type = start[1] === '%' ? lexer.TOKEN_BLOCK_START : lexer.TOKEN_VARIABLE_START;
        return { type, value: start, lineno, colno };
      }
    }
    const from = this.index;
    if (this.str.startsWith('{#', from)) {
      const end = this.str.indexOf('#}', from + 2);
      if (end === -1) throw new Error('expected end of comment, got end of file');
      this.forwardN(end + 2 - from);
      return { type: lexer.TOKEN_COMMENT, value: this.str.slice(from, end + 2), lineno, colno };
    }
    DATA_END.lastIndex = from;
    const m = DATA_END.exec(this.str);
    // nunjucks reads the text up to a stray comment end, then fails on it.
    if (m?.[0] === '#}') throw new Error('unexpected end of comment');
    const end = m ? m.index : this.len;
    this.forwardN(end - from);
    return { type: lexer.TOKEN_DATA, value: this.str.slice(from, end), lineno, colno };
  }

  override nextToken(): Token | null {
    const tok = this.in_code ? this.codeToken() : this.dataToken();
    this.opened = tok?.type === lexer.TOKEN_BLOCK_START || tok?.type === lexer.TOKEN_VARIABLE_START;
    if (this.opened) this.inBlock = tok?.type === lexer.TOKEN_BLOCK_START;
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
      // Whitespace between a tag's tokens: skipped here rather than made into tokens nobody reads.
      // It parts `{%` from a `+` (then not a marker), as a whitespace token did.
      WHITESPACE.lastIndex = this.index;
      const space = WHITESPACE.exec(this.str);
      if (space) {
        this.forwardN(space[0].length);
        this.opened = false;
        if (this.isFinished()) return null;
      }
      // `{%+`, `{{+` and `+%}`: markers that only matter with lstrip_blocks and trim_blocks, which
      // the service's environment does not set; they are read and have no effect.
      if (this.opened && this.current() === '+') this.forward();
      else if (
        this.inBlock &&
        this.open === 0 &&
        this.current() === '+' &&
        this.str.startsWith('%}', this.index + 1)
      )
        this.forward();
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
      // A name (or true, false, none, null), as nunjucks reads one: up to whitespace or a delimiter.
      SYMBOL.lastIndex = this.index;
      const symbol = SYMBOL.exec(this.str)?.[0];
      if (symbol) {
        this.forwardN(symbol.length);
        const type =
          symbol === 'true' || symbol === 'false'
            ? lexer.TOKEN_BOOLEAN
            : symbol === 'none' || symbol === 'null'
              ? lexer.TOKEN_NONE
              : lexer.TOKEN_SYMBOL;
        return { type, value: symbol, lineno, colno };
      }
    }
    return super.nextToken();
  }
}
