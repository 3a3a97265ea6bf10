/** Jinja2's exceptions the parser raises (jinja2/exceptions.py). */
/** A template that does not parse; `line` is 1-based. */
export class TemplateSyntaxError extends Error {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(message);
  }
}
