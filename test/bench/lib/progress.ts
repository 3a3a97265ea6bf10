/** Progress on stderr: one rewritten line on a terminal, plain lines otherwise. */
const tty = process.stderr.isTTY === true;
let open = false;
let lastPlain = 0;

/** A line that the next one replaces; without a terminal, at most one every 2 s. */
export const progress = (line: string): void => {
  if (tty) {
    process.stderr.write(`\r\x1b[2K${line}`);
    open = true;
  } else if (performance.now() - lastPlain > 2000) {
    lastPlain = performance.now();
    process.stderr.write(`${line}\n`);
  }
};

/** A line that stays (a phase finished, a warning). */
export const note = (line: string): void => {
  if (open) process.stderr.write('\r\x1b[2K');
  open = false;
  process.stderr.write(`${line}\n`);
};

export const bar = (done: number, total: number, width = 20): string => {
  const filled = Math.round((done / Math.max(1, total)) * width);
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total}`;
};
