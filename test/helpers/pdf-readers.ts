/**
 * Real PDF readers, as a person checking a file would run them: poppler's pdfinfo, pdffonts and
 * pdfdetach, and qpdf (its --check and its JSON view of the objects). Each takes the PDF's bytes
 * and answers what the tool printed (or parsed it, for qpdf --json).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Runs `tool` with the PDF written to a file (`{}` in `args` is its path); stdout, and the exit code. */
export const withPdfFile = async (
  bytes: Uint8Array,
  tool: string,
  args: readonly string[],
): Promise<{ stdout: string; stderr: string; code: number }> => {
  const dir = await mkdtemp(join(tmpdir(), 'pdf-reader-'));
  const file = join(dir, 'doc.pdf');
  try {
    await writeFile(file, bytes);
    const argv = args.map((a) => (a === '{}' ? file : a));
    try {
      const { stdout, stderr } = await run(tool, argv, { maxBuffer: 64 * 1024 * 1024, cwd: dir });
      return { stdout, stderr, code: 0 };
    } catch (e) {
      const err = e as { stdout?: string; stderr?: string; code?: number };
      return {
        stdout: err.stdout ?? '',
        stderr: err.stderr ?? '',
        code: typeof err.code === 'number' ? err.code : 1,
      };
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
};

/** `pdfinfo -meta`: the XMP metadata stream, as poppler reads it. */
export const pdfinfoMeta = async (bytes: Uint8Array): Promise<string> =>
  (await withPdfFile(bytes, 'pdfinfo', ['-meta', '{}'])).stdout;

/** `pdfinfo`'s fields (Title, Tagged, Pages, ...). */
export const pdfinfo = async (bytes: Uint8Array): Promise<Record<string, string>> => {
  const { stdout } = await withPdfFile(bytes, 'pdfinfo', ['{}']);
  return Object.fromEntries(
    stdout
      .split('\n')
      .map((line) => /^([^:]+):\s*(.*)$/.exec(line))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => [m[1] as string, m[2] as string]),
  );
};

export interface PdfFontRow {
  readonly name: string;
  readonly type: string;
  readonly embedded: boolean;
}

/** `pdffonts`: every font and whether it is embedded. */
export const pdffonts = async (bytes: Uint8Array): Promise<PdfFontRow[]> => {
  const { stdout } = await withPdfFile(bytes, 'pdffonts', ['{}']);
  return stdout
    .split('\n')
    .slice(2)
    .filter((line) => line.trim() !== '')
    .map((line) => {
      // Columns: name, type (may hold spaces), encoding, emb, sub, uni, object, generation.
      const m = /^(\S+)\s+(.+?)\s+(\S+)\s+(yes|no)\s+(yes|no)\s+(yes|no)\s+\d+\s+\d+\s*$/.exec(line);
      if (!m) throw new Error(`pdffonts printed a line this does not read: ${line}`);
      return { name: m[1] as string, type: m[2] as string, embedded: m[4] === 'yes' };
    });
};

/** `pdfdetach -list`: the embedded files' names. */
export const pdfdetachList = async (bytes: Uint8Array): Promise<string[]> => {
  const { stdout } = await withPdfFile(bytes, 'pdfdetach', ['-list', '{}']);
  return stdout
    .split('\n')
    .slice(1)
    .map((line) => /^\d+:\s*(.*)$/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined);
};

/** `pdfdetach -save N`: the Nth (1-based) embedded file's bytes. */
export const pdfdetachSave = async (bytes: Uint8Array, n: number): Promise<string> => {
  const { stdout } = await withPdfFile(bytes, 'sh', [
    '-c',
    `pdfdetach -save ${n} -o out.bin "$0" >/dev/null && cat out.bin`,
    '{}',
  ]);
  return stdout;
};

/** `qpdf --check`: its exit code (0: no errors, 3: warnings only) and what it printed. */
export const qpdfCheck = async (bytes: Uint8Array): Promise<{ code: number; output: string }> => {
  const { stdout, stderr, code } = await withPdfFile(bytes, 'qpdf', ['--check', '{}']);
  return { code, output: stdout + stderr };
};

export interface QpdfJson {
  readonly trailer: Record<string, unknown>;
  /** Objects by `obj:N 0 R`, each `{value}` or `{stream: {dict}}`. */
  readonly objects: Record<string, { value?: unknown; stream?: { dict: Record<string, unknown> } }>;
}

/** `qpdf --json`'s version 2 view of every object. */
export const qpdfJson = async (bytes: Uint8Array): Promise<QpdfJson> => {
  const { stdout } = await withPdfFile(bytes, 'qpdf', ['--json=2', '--json-key=qpdf', '{}']);
  const qpdf = (JSON.parse(stdout) as { qpdf: [unknown, Record<string, unknown>] }).qpdf;
  const objects = qpdf[1] as QpdfJson['objects'];
  const trailer = (objects.trailer as { value: Record<string, unknown> }).value;
  return { trailer, objects };
};

/** An object's dictionary (a plain object's value or a stream's dict), following `N 0 R`. */
export const qpdfDict = (json: QpdfJson, ref: unknown): Record<string, unknown> => {
  const object = json.objects[`obj:${String(ref)}`];
  if (!object) throw new Error(`no object ${String(ref)}`);
  return (object.stream?.dict ?? object.value) as Record<string, unknown>;
};
