/**
 * What this process writes to stdout and stderr (the service's log lines and EMF metrics go
 * there), kept for assertions. `swallowJson` keeps JSON lines out of the test output too.
 * captureFileOutput: the same from a stack process's output file (child-stack.ts).
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

export interface CapturedOutput {
  /** Everything written since capturing began (or was cleared), chunk by chunk. */
  readonly chunks: string[];
  /** The JSON lines among them, parsed. */
  json(): Record<string, unknown>[];
  clear(): void;
  stop(): void;
}

const jsonLines = (chunks: readonly string[]): Record<string, unknown>[] =>
  chunks
    .flatMap((c) => c.split('\n'))
    .filter((l) => l.trim().startsWith('{'))
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as Record<string, unknown>];
      } catch {
        return [];
      }
    });

export const captureOutput = ({ swallowJson = false }: { swallowJson?: boolean } = {}): CapturedOutput => {
  const chunks: string[] = [];
  const originals = {
    out: process.stdout.write.bind(process.stdout),
    err: process.stderr.write.bind(process.stderr),
  };
  const capture =
    (original: typeof process.stdout.write) =>
    (chunk: unknown, ...rest: unknown[]): boolean => {
      const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8');
      chunks.push(text);
      if (swallowJson && text.startsWith('{')) return true;
      return (original as (...a: unknown[]) => boolean)(chunk, ...rest);
    };
  process.stdout.write = capture(originals.out) as typeof process.stdout.write;
  process.stderr.write = capture(originals.err) as typeof process.stderr.write;
  return {
    chunks,
    json: () => jsonLines(chunks),
    clear: () => {
      chunks.length = 0;
    },
    stop: () => {
      process.stdout.write = originals.out;
      process.stderr.write = originals.err;
    },
  };
};

/**
 * What a stack process writes (its handlers' log lines among them) from now on, read from its
 * output file (child-stack.ts), which it writes before each write returns. A shared stack's file
 * holds every test file's lines: assert what never appears, or on lines of your own accounts.
 */
export const captureFileOutput = (path: string): CapturedOutput => {
  const sizeOf = () => {
    const fd = openSync(path, 'a+');
    try {
      return fstatSync(fd).size;
    } finally {
      closeSync(fd);
    }
  };
  let from = sizeOf();
  let until: number | undefined;
  const read = (): string[] => {
    const fd = openSync(path, 'r');
    try {
      const end = until ?? fstatSync(fd).size;
      const buffer = Buffer.alloc(Math.max(0, end - from));
      readSync(fd, buffer, 0, buffer.length, from);
      return [buffer.toString('utf8')];
    } finally {
      closeSync(fd);
    }
  };
  return {
    get chunks() {
      return read();
    },
    json: () => jsonLines(read()),
    clear: () => {
      from = sizeOf();
    },
    stop: () => {
      until ??= sizeOf();
    },
  };
};
