/**
 * Peers, where installed: wkhtmltopdf and WeasyPrint, each run as a process per PDF (as they are
 * used), on the same final HTML, paper and margins. Missing tools are reported as skipped.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Fixture } from './fixtures/index.js';

export interface Peer {
  readonly name: 'wkhtmltopdf' | 'weasyprint';
  readonly version: string;
  /** Why a fixture cannot be rendered by this peer, if it cannot. */
  unsupported(fixture: Fixture): string | undefined;
  args(fixture: Fixture, input: string, output: string, css: string): string[];
}

const versionOf = (command: string, args: string[]): string | undefined => {
  try {
    return execFileSync(command, args, {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 10_000,
    })
      .trim()
      .split('\n')[0];
  } catch {
    return undefined;
  }
};

const mm = (inches: number): string => `${(inches * 25.4).toFixed(2)}mm`;

export const detectPeers = (): { found: Peer[]; missing: string[] } => {
  const found: Peer[] = [];
  const missing: string[] = [];
  const wk = versionOf('wkhtmltopdf', ['--version']);
  if (wk) {
    found.push({
      name: 'wkhtmltopdf',
      version: wk,
      unsupported: () => undefined,
      args: (f, input, output) => [
        '--quiet',
        '--page-size',
        f.options.pdf.format === 'LETTER'
          ? 'Letter'
          : f.options.pdf.format === 'LEGAL'
            ? 'Legal'
            : f.options.pdf.format,
        '--margin-top',
        mm(f.options.pdf.margins.top),
        '--margin-right',
        mm(f.options.pdf.margins.right),
        '--margin-bottom',
        mm(f.options.pdf.margins.bottom),
        '--margin-left',
        mm(f.options.pdf.margins.left),
        // Its default waits 200 ms for scripts: kept only where the page needs its script.
        '--javascript-delay',
        f.needsScript ? '200' : '0',
        input,
        output,
      ],
    });
  } else missing.push('wkhtmltopdf');
  const wp = versionOf('weasyprint', ['--version']);
  if (wp) {
    found.push({
      name: 'weasyprint',
      version: wp,
      unsupported: (f) => (f.needsScript ? 'runs no JavaScript' : undefined),
      args: (_f, input, output, css) => ['--quiet', '--stylesheet', css, input, output],
    });
  } else missing.push('weasyprint');
  return { found, missing };
};

const run = (command: string, args: string[]): Promise<void> =>
  new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (c: Buffer) => {
      err += c.toString();
    });
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${command} exited ${code}: ${err.slice(-300)}`)),
    );
  });

/** One PDF per process; wall time from spawn to exit. */
export const peerOnce = async (peer: Peer, fixture: Fixture): Promise<{ ms: number; bytes: number }> => {
  const dir = mkdtempSync(join(tmpdir(), 'pdf-bench-peer-'));
  try {
    const input = join(dir, 'in.html');
    const output = join(dir, 'out.pdf');
    const css = join(dir, 'page.css');
    const m = fixture.options.pdf.margins;
    writeFileSync(input, fixture.html);
    writeFileSync(
      css,
      `@page { size: ${fixture.options.pdf.format}${fixture.options.pdf.landscape ? ' landscape' : ''}; margin: ${m.top}in ${m.right}in ${m.bottom}in ${m.left}in; }`,
    );
    const started = performance.now();
    await run(peer.name, peer.args(fixture, input, output, css));
    return { ms: performance.now() - started, bytes: statSync(output).size };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};
