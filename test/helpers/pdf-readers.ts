/**
 * Real PDF readers, as a person checking a file would run them: poppler's pdftotext, pdftoppm,
 * pdfinfo, pdffonts and pdfdetach, and qpdf (--show-encryption, --check, its JSON view of the
 * objects), run on a PDF written to a temporary file. Each answers what the tool printed, or its
 * failure; none reads a PDF with our own code.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface ToolOutput {
  readonly ok: boolean;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `tool` with `args(file, dir)` on the PDF written to a temporary file, in that file's
 * directory (what a tool writes lands beside it); the caller cleans up, after reading it.
 */
export const onPdf = async (
  pdf: Uint8Array,
  tool: string,
  args: (file: string, dir: string) => readonly string[],
): Promise<
  ToolOutput & { readonly code: number; readonly dir: string; readonly cleanup: () => Promise<void> }
> => {
  const dir = await mkdtemp(join(tmpdir(), 'pdf-reader-'));
  const file = join(dir, 'in.pdf');
  const cleanup = () => rm(dir, { recursive: true, force: true });
  await writeFile(file, pdf);
  try {
    const { stdout, stderr } = await run(tool, [...args(file, dir)], {
      maxBuffer: 64 * 1024 * 1024,
      cwd: dir,
    });
    return { ok: true, code: 0, stdout, stderr, dir, cleanup };
  } catch (e) {
    const { stdout = '', stderr = '', code } = e as { stdout?: string; stderr?: string; code?: unknown };
    return { ok: false, code: typeof code === 'number' ? code : 1, stdout, stderr, dir, cleanup };
  }
};

/** Runs `tool` with the PDF written to a file (`{}` in `args` is its path); stdout, and the exit code. */
export const withPdfFile = async (
  bytes: Uint8Array,
  tool: string,
  args: readonly string[],
): Promise<{ stdout: string; stderr: string; code: number }> => {
  const out = await onPdf(bytes, tool, (file) => args.map((a) => (a === '{}' ? file : a)));
  await out.cleanup();
  return { stdout: out.stdout, stderr: out.stderr, code: out.code };
};

const once = async (pdf: Uint8Array, tool: string, args: (file: string) => readonly string[]) => {
  const { stdout, stderr, code } = await withPdfFile(pdf, tool, args('{}'));
  return { ok: code === 0, stdout, stderr };
};

/** `qpdf --show-encryption`, with a password when given. */
export const qpdfEncryption = (pdf: Uint8Array, password?: string): Promise<ToolOutput> =>
  once(pdf, 'qpdf', (f) => [
    ...(password !== undefined ? [`--password=${password}`] : []),
    '--show-encryption',
    f,
  ]);

/** pdftotext of pages `first`-`last` (all when absent), with a user password when given. */
export const pdfText = (
  pdf: Uint8Array,
  options: { readonly userPassword?: string; readonly first?: number; readonly last?: number } = {},
): Promise<ToolOutput> =>
  once(pdf, 'pdftotext', (f) => [
    ...(options.userPassword !== undefined ? ['-upw', options.userPassword] : []),
    ...(options.first !== undefined ? ['-f', String(options.first)] : []),
    ...(options.last !== undefined ? ['-l', String(options.last)] : []),
    f,
    '-',
  ]);

export interface PageImage {
  readonly width: number;
  readonly height: number;
  /** The colour at (x, y) from the top left, as [r, g, b] 0-255. */
  readonly at: (x: number, y: number) => readonly [number, number, number];
}

/** Page `page` as pdftoppm draws it at `dpi` (a PPM image), for pixel checks. */
export const pageImage = async (pdf: Uint8Array, page: number, dpi = 36): Promise<PageImage> => {
  const out = await onPdf(pdf, 'pdftoppm', (f, dir) => [
    '-f',
    String(page),
    '-l',
    String(page),
    '-r',
    String(dpi),
    '-singlefile',
    f,
    join(dir, 'page'),
  ]);
  try {
    if (!out.ok) throw new Error(`pdftoppm failed: ${out.stderr}`);
    const ppm = await readFile(join(out.dir, 'page.ppm'));
    // P6 <width> <height> <max>\n then RGB bytes.
    const header = /^P6\s+(\d+)\s+(\d+)\s+(\d+)\s/.exec(ppm.subarray(0, 64).toString('latin1'));
    if (!header) throw new Error('pdftoppm wrote no P6 image');
    const [whole, w, h] = header as unknown as [string, string, string];
    const width = Number(w);
    const height = Number(h);
    const data = ppm.subarray(whole.length);
    return {
      width,
      height,
      at: (x, y) => {
        const i = (Math.round(y) * width + Math.round(x)) * 3;
        return [data[i] ?? 0, data[i + 1] ?? 0, data[i + 2] ?? 0];
      },
    };
  } finally {
    await out.cleanup();
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
