/**
 * Real PDF readers for the finishing steps' tests (issue 34): poppler's pdftotext and pdftoppm,
 * and qpdf, run on a PDF written to a temporary file. Each answers what the tool printed, or its
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

/** Runs `tool` with `args(file)` on the PDF written to a temporary file. */
export const onPdf = async (
  pdf: Uint8Array,
  tool: string,
  args: (file: string, dir: string) => readonly string[],
): Promise<ToolOutput & { readonly dir: string; readonly cleanup: () => Promise<void> }> => {
  const dir = await mkdtemp(join(tmpdir(), 'pdf-reader-'));
  const file = join(dir, 'in.pdf');
  await writeFile(file, pdf);
  const cleanup = () => rm(dir, { recursive: true, force: true });
  try {
    const { stdout, stderr } = await run(tool, [...args(file, dir)], { maxBuffer: 64 * 1024 * 1024 });
    return { ok: true, stdout, stderr, dir, cleanup };
  } catch (e) {
    const { stdout = '', stderr = '' } = e as { stdout?: string; stderr?: string };
    return { ok: false, stdout, stderr, dir, cleanup };
  }
};

const once = async (pdf: Uint8Array, tool: string, args: (file: string) => readonly string[]) => {
  const out = await onPdf(pdf, tool, args);
  await out.cleanup();
  return { ok: out.ok, stdout: out.stdout, stderr: out.stderr };
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
