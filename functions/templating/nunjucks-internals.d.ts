/**
 * Typing for the parts of nunjucks (3.2.4, pinned in package.json) that the Jinja2 parser extends:
 * its tokenizer and its parser's token-stream helpers. nunjucks ships no types for them.
 */
declare module 'nunjucks/src/lexer.js' {
  export interface Token {
    type: string;
    value: string;
    lineno: number;
    colno: number;
  }
  export interface Tokenizer {
    str: string;
    index: number;
    len: number;
    lineno: number;
    colno: number;
    in_code: boolean;
    tags: Record<
      'BLOCK_START' | 'BLOCK_END' | 'VARIABLE_START' | 'VARIABLE_END' | 'COMMENT_START' | 'COMMENT_END',
      string
    >;
    nextToken(): Token | null;
    current(): string;
    currentStr(): string;
    isFinished(): boolean;
    forward(): void;
    forwardN(n: number): void;
    _matches(str: string): boolean | null;
    _extractMatching(breakOnMatch: boolean, charString: string): string | null;
    _extractRegex(re: RegExp): RegExpMatchArray | null;
  }
  const lexer: {
    lex(src: string, opts?: object): Tokenizer;
    TOKEN_STRING: string;
    TOKEN_WHITESPACE: string;
    TOKEN_DATA: string;
    TOKEN_BLOCK_START: string;
    TOKEN_BLOCK_END: string;
    TOKEN_VARIABLE_START: string;
    TOKEN_VARIABLE_END: string;
    TOKEN_COMMENT: string;
    TOKEN_LEFT_PAREN: string;
    TOKEN_RIGHT_PAREN: string;
    TOKEN_LEFT_BRACKET: string;
    TOKEN_RIGHT_BRACKET: string;
    TOKEN_LEFT_CURLY: string;
    TOKEN_RIGHT_CURLY: string;
    TOKEN_OPERATOR: string;
    TOKEN_COMMA: string;
    TOKEN_COLON: string;
    TOKEN_TILDE: string;
    TOKEN_PIPE: string;
    TOKEN_INT: string;
    TOKEN_FLOAT: string;
    TOKEN_BOOLEAN: string;
    TOKEN_NONE: string;
    TOKEN_SYMBOL: string;
    TOKEN_REGEX: string;
  };
  export default lexer;
}

declare module 'nunjucks/src/parser.js' {
  import type { Token, Tokenizer } from 'nunjucks/src/lexer.js';

  class Parser {
    constructor(tokens: Tokenizer);
    tokens: Tokenizer;
    peeked: Token | null;
    dropLeadingWhitespace: boolean;
    nextToken(withWhitespace?: boolean): Token | null;
    peekToken(): Token | null;
    pushToken(tok: Token | null): void;
    skip(type: string): boolean;
    skipValue(type: string, value: string): boolean;
    skipSymbol(value: string): boolean;
  }
  const parser: { Parser: typeof Parser };
  export default parser;
}
