/**
 * The dashboard's curl snippet (lib/dashboard/site/snippets.ts), run as a user would paste it into
 * a shell, against the local stack: with a new API key in the environment it renders a saved
 * template with its sample data, and the PDF's text is the sample's. The same body the template
 * page writes (template id, variables, page options).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { snippetRoutes } from '../../lib/dashboard/api-routes.js';
import { API_KEY_VARIABLE, renderSnippets, templateRenderBody } from '../../lib/dashboard/site/snippets.js';
import { useLocalStack } from '../helpers/local-stack.js';
import { readPdf } from '../helpers/pdf.js';

const run = promisify(execFile);
const local = useLocalStack();

describe('the curl snippet', () => {
  it('renders a saved template with its sample data through an API key', async () => {
    const session = await local.sessionToken();
    const created = await local.api('/v1/api-keys', {
      method: 'POST',
      token: session,
      body: { name: 'snippet' },
    });
    expect(created.status).toBe(201);
    const template = await local.api('/v1/templates', {
      method: 'POST',
      token: session,
      body: {
        name: 'Snippet letter',
        html: '<h1>Dear {{ customer }}</h1>\n{% for line in lines %}<p>{{ line.item }}: {{ line.price }}</p>{% endfor %}',
      },
    });
    expect(template.status).toBe(201);
    const sample = { customer: "Ada O'Brien", lines: [{ item: 'Pens', price: 3.5 }] };
    const { curl } = renderSnippets(snippetRoutes(), {
      apiUrl: local.stack.baseUrl,
      body: templateRenderBody(template.json.id, sample, { format: 'LETTER', landscape: true }),
    });

    const { stdout } = await run('bash', ['-c', curl], {
      env: { ...process.env, [API_KEY_VARIABLE]: created.json.key },
    });
    const job = JSON.parse(stdout);
    expect(job).toMatchObject({ status: 'completed', template_id: template.json.id, template_version: 1 });
    const pdf = await readPdf(new Uint8Array(await (await fetch(job.download_url)).arrayBuffer()));
    expect(pdf.text).toContain("Dear Ada O'Brien");
    expect(pdf.text).toContain('Pens: 3.5');
    // Letter, landscape: wider than tall.
    expect(pdf.pages[0]?.widthPt).toBeGreaterThan(pdf.pages[0]?.heightPt ?? Infinity);
  });
});
