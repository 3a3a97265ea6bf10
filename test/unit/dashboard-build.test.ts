/**
 * The dashboard's build (lib/dashboard/build.ts), offline with the project's esbuild: what the page
 * loads first stays under its JavaScript budget, and the template editor (CodeMirror) is a chunk of
 * its own that only opening an editor loads, as the batches and webhooks pages are.
 */
import { gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { type BuiltSite, buildSite } from '../../lib/dashboard/build.js';

/** The page's JavaScript before the editor, gzipped (issue 24: under 40 KB). */
const INITIAL_JS_BUDGET_BYTES = 40 * 1024;

let site: BuiltSite;
const gzipped = (path: string) => gzipSync(site.files.get(path) ?? new Uint8Array(), { level: 9 }).length;
const inputsOf = (path: string) => Object.keys(site.metafile.outputs[path]?.inputs ?? {});

beforeAll(async () => {
  site = await buildSite();
});

describe('the dashboard build', () => {
  it(`keeps the JavaScript a page loads first under ${INITIAL_JS_BUDGET_BYTES / 1024} KB gzipped`, () => {
    const initial = site.initialScripts.reduce((sum, path) => sum + gzipped(path), 0);
    const editor = site.editorScripts.reduce((sum, path) => sum + gzipped(path), 0);
    console.log(
      `dashboard JavaScript, gzipped: ${(initial / 1024).toFixed(1)} KB first (${site.initialScripts.join(', ')}), ` +
        `${(editor / 1024).toFixed(1)} KB for the editor (${site.editorScripts.join(', ')})`,
    );
    expect(initial).toBeLessThan(INITIAL_JS_BUDGET_BYTES);
    expect(site.initialScripts.length).toBeGreaterThan(0);
  });

  it('puts CodeMirror in a chunk that only the editor imports, dynamically', () => {
    expect(site.editorScripts.length).toBeGreaterThan(0);
    const initialInputs = site.initialScripts.flatMap(inputsOf);
    const editorInputs = site.editorScripts.flatMap(inputsOf);
    expect(initialInputs.filter((i) => /@codemirror|@lezer|codemirror/.test(i))).toEqual([]);
    for (const lib of ['@codemirror/view', '@codemirror/lang-html', '@codemirror/lang-jinja']) {
      expect(
        editorInputs.some((i) => i.includes(`node_modules/${lib}/`)),
        lib,
      ).toBe(true);
    }
    const main = site.initialScripts.find((p) => site.metafile.outputs[p]?.entryPoint);
    const dynamic = (site.metafile.outputs[main ?? '']?.imports ?? []).filter(
      (i) => i.kind === 'dynamic-import',
    );
    expect(dynamic.map((i) => i.path)).toEqual(expect.arrayContaining([site.editorScripts[0]]));
  });

  it('puts the batches and webhooks pages in a chunk the page imports when one opens, apart from the editor', () => {
    expect(site.laterPageScripts.length).toBeGreaterThan(0);
    const laterInputs = site.laterPageScripts.flatMap(inputsOf);
    // The template editor's finishing options too (issue 34): the editor imports them from there.
    for (const page of ['pages/batches.tsx', 'pages/webhooks.tsx', 'pages/finishing-options.tsx']) {
      expect(laterInputs, page).toContain(page);
      expect(site.initialScripts.flatMap(inputsOf), page).not.toContain(page);
    }
    expect(laterInputs.filter((i) => /@codemirror|@lezer|codemirror/.test(i))).toEqual([]);
    expect(site.editorScripts.filter((p) => site.laterPageScripts.includes(p))).toEqual([]);
  });

  it('gives the page the snippet routes as data, without the route declarations’ code (zod, the domain)', () => {
    const inputs = [...site.initialScripts, ...site.editorScripts].flatMap(inputsOf);
    expect(inputs.filter((i) => /node_modules\/zod\/|functions\//.test(i))).toEqual([]);
    const code = site.initialScripts.map((p) => new TextDecoder().decode(site.files.get(p))).join('\n');
    expect(code).toContain('"/v1/pdf"');
    expect(code).toContain('"template_id"');
  });

  it('writes an index.html that loads the entry as a module, its stylesheet, and nothing inline', () => {
    const html = new TextDecoder().decode(site.files.get('index.html'));
    const main = site.initialScripts.find((p) => site.metafile.outputs[p]?.entryPoint) as string;
    expect(html).toContain(`<script type="module" src="${main}"></script>`);
    expect(html).toMatch(/<link rel="stylesheet" href="assets\/main-[A-Z0-9]+\.css">/);
    // The Content-Security-Policy allows no inline script or style.
    expect(html).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
    expect(html).not.toMatch(/<style|\sstyle=/);
    // Relative URLs: the same files serve from / (CloudFront) and /dashboard/ (npm start).
    expect(html).not.toMatch(/(src|href)="\//);
    for (const path of site.files.keys()) {
      if (path.endsWith('.js') || path.endsWith('.css'))
        expect(path).toMatch(/^assets\/[\w-]+-[A-Z0-9]{8}\.(js|css)$/);
    }
  });

  it('needs neither eval nor new Function, which the policy refuses', () => {
    for (const path of [...site.initialScripts, ...site.editorScripts, ...site.laterPageScripts]) {
      const code = new TextDecoder().decode(site.files.get(path));
      expect(code, path).not.toMatch(/\beval\(|new Function\(/);
    }
  });
});
