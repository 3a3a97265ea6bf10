/**
 * `npm run starters:thumbnails`: draws each starter template's first page (lib/starters) as the
 * dashboard shows it (lib/dashboard/site/starters/<slug>.png): a local stack on a temporary
 * DATA_DIR renders it from its sample data and options, and poppler's pdftoppm draws the page.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startLocalStack } from '../lib/local/stack.js';
import { STARTERS, starterSlug } from '../lib/starters/starters.js';

const OUT = fileURLToPath(new URL('../lib/dashboard/site/starters/', import.meta.url));
const dataDir = await mkdtemp(join(tmpdir(), 'starter-thumbnails-'));
const stack = await startLocalStack({ dataDir, port: 0, quiet: true });
try {
  const token = await stack.issueToken({ sub: 'starter-thumbnails', email: 'thumbnails@example.com' });
  const api = (path: string, body?: unknown) =>
    fetch(`${stack.baseUrl}${path}`, {
      method: body ? 'POST' : 'GET',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body ? { body: JSON.stringify(body) } : {}),
    }).then((r) => r.json() as Promise<Record<string, unknown>>);
  const listed = (await api('/v1/templates/public?starters=true&limit=100')) as unknown as {
    id: string;
    name: string;
    version: number;
    sample_variables: unknown;
  }[];
  for (const starter of STARTERS) {
    const template = listed.find((t) => t.name === starter.name);
    if (!template) throw new Error(`${starter.name} was not seeded`);
    const job = await api('/v1/pdf', {
      template_id: template.id,
      template_version: template.version,
      variables: template.sample_variables,
    });
    if (typeof job.download_url !== 'string') throw new Error(`${starter.name}: ${JSON.stringify(job)}`);
    const slug = starterSlug(starter.name);
    const pdf = join(dataDir, `${slug}.pdf`);
    await writeFile(pdf, Buffer.from(await (await fetch(job.download_url)).arrayBuffer()));
    execFileSync('pdftoppm', ['-png', '-r', '30', '-f', '1', '-l', '1', '-singlefile', pdf, join(OUT, slug)]);
    process.stdout.write(`${slug}.png\n`);
  }
} finally {
  await stack.close();
  await rm(dataDir, { recursive: true, force: true });
}
