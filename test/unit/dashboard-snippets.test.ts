/**
 * The dashboard's code snippets (lib/dashboard/site/snippets.ts) against the route declarations
 * they are generated from (lib/dashboard/api-routes.ts), offline: the route and fields exist, and
 * each language's code carries the body unchanged (a shell runs the curl snippet with a stand-in
 * curl; Python and Node check theirs). The curl snippet against the local stack is
 * test/integration/dashboard-snippets.test.ts.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findRoute } from '../../functions/routes.js';
import { snippetRoutes } from '../../lib/dashboard/api-routes.js';
import { JsonText } from '../../lib/dashboard/site/json-text.js';
import { API_KEY_VARIABLE, pythonLiteral, renderSnippets } from '../../lib/dashboard/site/snippets.js';

const routes = snippetRoutes();
/** Quotes, a backslash, a dollar, a newline and non-ASCII: what would break naive quoting. */
const body = {
  template_id: 'tpl_01JABCDEFGHJKMNPQRSTVWXYZ0',
  variables: {
    customer: 'Ada O\'Brien "the" $HOME `x` \\ é 🎉',
    lines: [{ item: 'Pens\nblue', price: 3.5, taxed: true, note: null }],
    empty: {},
  },
  format: 'LETTER',
  landscape: true,
  margins: { top: 1, right: 0.5, bottom: 1, left: 0.5 },
};
const request = { apiUrl: 'https://api.example.com/', body };

describe('the snippet routes', () => {
  it('come from the route declarations: POST /v1/pdf with its body fields, callable with a key', () => {
    expect(findRoute(`${routes.createPdf.method} ${routes.createPdf.path}`)?.credentials).toContain('apiKey');
    expect(routes.createPdf).toMatchObject({ method: 'POST', path: '/v1/pdf', acceptsApiKey: true });
    expect(routes.createPdf.bodyFields).toEqual(
      expect.arrayContaining(['html', 'template_id', 'variables', 'format', 'landscape', 'margins']),
    );
  });

  it('refuses a field the route does not declare, so a renamed field fails here and not in a user’s script', () => {
    expect(() => renderSnippets(routes, { ...request, body: { template: 'x' } })).toThrow(
      /takes no template/,
    );
  });
});

describe('the snippets', () => {
  const snippets = renderSnippets(routes, request);

  it('read the key from the environment, never from the code', () => {
    expect(snippets.curl).toContain(`Bearer $${API_KEY_VARIABLE}`);
    expect(snippets.javascript).toContain(`process.env.${API_KEY_VARIABLE}`);
    expect(snippets.python).toContain(`os.environ['${API_KEY_VARIABLE}']`);
  });

  it('curl: a shell passes the method, the URL, the key and the body unchanged', () => {
    // A stand-in curl that prints its arguments, one per NUL-terminated record.
    const out = execFileSync('bash', ['-c', `curl() { printf '%s\\0' "$@"; }\n${snippets.curl}`], {
      env: { ...process.env, [API_KEY_VARIABLE]: 'pdf_live_test' },
    }).toString();
    const args = out.split('\0').slice(0, -1);
    expect(args.slice(0, 4)).toEqual(['-sS', '-X', 'POST', 'https://api.example.com/v1/pdf']);
    expect(args).toContain('Authorization: Bearer pdf_live_test');
    expect(args).toContain('Content-Type: application/json');
    expect(JSON.parse(args[args.indexOf('--data-binary') + 1] as string)).toEqual(body);
  });

  it('Python: the json= argument is the body, as Python reads it', () => {
    const literal = pythonLiteral(body);
    const read = execFileSync(
      'python3',
      ['-c', 'import ast, json, sys; print(json.dumps(ast.literal_eval(sys.stdin.read())))'],
      {
        input: literal,
      },
    ).toString();
    expect(JSON.parse(read)).toEqual(body);
    expect(snippets.python).toContain(`json=${pythonLiteral(body, '    ')}`);
    execFileSync('python3', ['-c', 'import ast, sys; ast.parse(sys.stdin.read())'], {
      input: snippets.python,
    });
  });

  it('JavaScript: a module Node can parse, whose body is the JSON', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dashboard-snippet-'));
    try {
      const file = join(dir, 'snippet.mjs');
      writeFileSync(file, snippets.javascript);
      execFileSync(process.execPath, ['--check', file]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(snippets.javascript).toContain('"https://api.example.com/v1/pdf"');
    const json = /body: JSON\.stringify\(([\s\S]*?)\),\n\}\);/.exec(snippets.javascript)?.[1] ?? '';
    expect(JSON.parse(json)).toEqual(body);
  });

  it('take the API URL as given, with or without its trailing slash or a path', () => {
    expect(renderSnippets(routes, { apiUrl: 'http://127.0.0.1:3000', body: {} }).curl).toContain(
      "'http://127.0.0.1:3000/v1/pdf'",
    );
    expect(renderSnippets(routes, { apiUrl: 'https://x.example/prod/', body: {} }).curl).toContain(
      "'https://x.example/prod/v1/pdf'",
    );
  });
});

describe('the snippets of a sample JSON.parse would change (issue 22)', () => {
  const sample = new JsonText(
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a `${` that the JavaScript snippet must escape
    '{"totals":{"2024":5,"2019":1},"n":10.0,"e":1e3,"id":123456789012345678,"s":"a\\/b `${x}` \\\\ é","ok":true,"no":null}',
  );
  const snippets = renderSnippets(routes, {
    apiUrl: 'https://api.example.com/',
    body: { template_id: 'tpl_01JABCDEFGHJKMNPQRSTVWXYZ0', variables: sample },
  });

  it('curl sends the sample as written', () => {
    const out = execFileSync('bash', ['-c', `curl() { printf '%s\\0' "$@"; }\n${snippets.curl}`]).toString();
    const args = out.split('\0').slice(0, -1);
    expect(args[args.indexOf('--data-binary') + 1]).toContain(`"variables": ${sample.text}`);
  });

  it('Python reads the same keys in order, 10.0 and 1e3 as floats and every digit', () => {
    const read = execFileSync(
      'python3',
      [
        '-c',
        'import ast, json, sys; print(json.dumps(ast.literal_eval(sys.stdin.read()), ensure_ascii=False))',
      ],
      { input: pythonLiteral(sample) },
    ).toString();
    expect(read.trim()).toBe(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the same `${`, as Python reads it
      '{"totals": {"2024": 5, "2019": 1}, "n": 10.0, "e": 1000.0, "id": 123456789012345678, "s": "a/b `${x}` \\\\ é", "ok": true, "no": null}',
    );
    execFileSync('python3', ['-c', 'import ast, sys; ast.parse(sys.stdin.read())'], {
      input: snippets.python,
    });
  });

  it('JavaScript sends it as JSON text, which a JavaScript object could not hold', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dashboard-snippet-'));
    try {
      const file = join(dir, 'snippet.mjs');
      // The module's body, evaluated: the text it would send.
      const literal = /body: (`[\s\S]*?`),\n\}\);/.exec(snippets.javascript)?.[1] ?? '';
      writeFileSync(file, `process.stdout.write(${literal});`);
      const sent = execFileSync(process.execPath, [file]).toString();
      expect(sent).toContain(`"variables": ${sample.text}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
