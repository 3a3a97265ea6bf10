/**
 * Processes descended from one (a browser's renderers, a sandboxed function's children), from
 * rows read by the caller: /proc or `ps`, with whatever else each row carries.
 */
export const descendantsOf = <T extends { readonly pid: number; readonly ppid: number }>(
  root: number,
  rows: readonly T[],
): T[] => {
  const members = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const row of rows) {
      if (!members.has(row.pid) && members.has(row.ppid)) {
        members.add(row.pid);
        grew = true;
      }
    }
  }
  return rows.filter((row) => members.has(row.pid));
};
