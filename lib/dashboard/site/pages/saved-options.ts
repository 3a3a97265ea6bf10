/**
 * What the template editor saves as `pdf_options`. A `PATCH` replaces a template's `pdf_options`
 * whole (docs/api/templates.md), so a save sends back, unchanged, every saved option the editor
 * does not edit (`pdf_a`, `e_invoice`, whatever was set through the API), beside the fields' own.
 * Its own small module: the editor is in the first load, and this is all of it the save needs
 * (finishing-body.ts goes with the later chunk). No DOM, no JSX (test/unit/dashboard-saved-options.test.ts).
 */

/** The finishing options the editor edits (finishing-options.tsx). */
export const FINISHING_FIELDS = ['watermark', 'stamp', 'signature'] as const;

type Options = Readonly<Record<string, unknown>>;

/** The saved options the editor does not edit (`edited`: the names it does), as saved. */
export const keptOptions = (
  saved: Options | null | undefined,
  edited: readonly string[],
): Record<string, unknown> =>
  Object.fromEntries(Object.entries(saved ?? {}).filter(([name]) => !edited.includes(name)));

/**
 * The `pdf_options` a save sends: the saved options the editor does not edit, as saved, then the
 * fields' own (`chosen`, whose names are among `edited` or the finishing fields); none at all: null.
 */
export const optionsToSave = (
  saved: Options | null | undefined,
  edited: readonly string[],
  chosen: Options,
): Record<string, unknown> | null => {
  const body = { ...keptOptions(saved, [...edited, ...FINISHING_FIELDS]), ...chosen };
  return Object.keys(body).length > 0 ? body : null;
};
