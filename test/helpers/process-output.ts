/**
 * What this process writes to stdout and stderr (the service's log lines and EMF metrics go
 * there), kept for assertions. `swallowJson` keeps JSON lines out of the test output too.
 */
export interface CapturedOutput {
  /** Everything written since capturing began (or was cleared), chunk by chunk. */
  readonly chunks: string[];
  /** The JSON lines among them, parsed. */
  json(): Record<string, unknown>[];
  clear(): void;
  stop(): void;
}

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
    json: () =>
      chunks
        .flatMap((c) => c.split('\n'))
        .filter((l) => l.trim().startsWith('{'))
        .flatMap((l) => {
          try {
            return [JSON.parse(l) as Record<string, unknown>];
          } catch {
            return [];
          }
        }),
    clear: () => {
      chunks.length = 0;
    },
    stop: () => {
      process.stdout.write = originals.out;
      process.stderr.write = originals.err;
    },
  };
};
