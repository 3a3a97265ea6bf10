/** keyword.kwlist of Python 3.11: Jinja2 passes keyword arguments so named as one `**{...}` dict. */
export const PYTHON_KEYWORDS: ReadonlySet<string> = new Set(
  'False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield'.split(
    ' ',
  ),
);
