/**
 * "Use this template" code: curl, JavaScript (fetch) and Python (requests) that render a template
 * through the API. The route they call (method, path, the body's fields, whether a key may call it)
 * comes from the API's route declarations (functions/routes.ts), the ones the OpenAPI document is
 * made from: lib/dashboard/api-routes.ts reads them at build time and the page is given the result
 * as data, so a renamed route or field breaks the build's test, not a user's script.
 *
 * Pure: no DOM, no fetch; the page and the unit test call it alike.
 */

import { JsonText, stringifyWithJsonText } from './json-text.js';

/** One route as the snippets need it. */
export interface SnippetRoute {
  readonly method: string;
  /** API Gateway syntax, without parameters for the routes used here (`/v1/pdf`). */
  readonly path: string;
  /** The top-level fields its JSON body accepts. */
  readonly bodyFields: readonly string[];
  /** Whether an API key may call it (snippets run with a key). */
  readonly acceptsApiKey: boolean;
}

export interface SnippetRoutes {
  /** POST /v1/pdf: render a PDF. */
  readonly createPdf: SnippetRoute;
}

/** The environment variable the snippets read the key from: no key is written into code. */
export const API_KEY_VARIABLE = 'PDF_API_KEY';

export type SnippetLanguage = 'curl' | 'javascript' | 'python';
export const SNIPPET_LANGUAGES: readonly { readonly id: SnippetLanguage; readonly label: string }[] = [
  { id: 'curl', label: 'curl' },
  { id: 'javascript', label: 'JavaScript' },
  { id: 'python', label: 'Python' },
];

export interface RenderRequest {
  /** The API's base URL, absolute, e.g. `https://api.example.com/` or `http://127.0.0.1:3000/`. */
  readonly apiUrl: string;
  /** The body's fields (template_id, variables, format, ...), in the order they are written. */
  /** A JsonText value (sample data JSON.parse would change) is written as its text in each language. */
  readonly body: Readonly<Record<string, unknown>>;
}

/** The body with only the fields the route declares; a field it does not know is a bug here. */
const checkedBody = (
  route: SnippetRoute,
  body: Readonly<Record<string, unknown>>,
): Record<string, unknown> => {
  const unknown = Object.keys(body).filter((k) => !route.bodyFields.includes(k));
  if (unknown.length > 0)
    throw new Error(`${route.method} ${route.path} takes no ${unknown.join(', ')} (route declarations)`);
  return Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
};

const urlOf = (route: SnippetRoute, apiUrl: string): string =>
  new URL(route.path.replace(/^\//, ''), apiUrl.endsWith('/') ? apiUrl : `${apiUrl}/`).href;

/** A word for a POSIX shell in single quotes: a quote inside ends, escapes and reopens them. */
const shellQuote = (text: string): string => `'${text.replaceAll("'", `'\\''`)}'`;

/** A JSON string token, or a JSON literal Python spells otherwise. */
const JSON_TOKEN = /"(?:[^"\\]|\\.)*"|true|false|null/g;
const PYTHON_LITERALS: Readonly<Record<string, string>> = { true: 'True', false: 'False', null: 'None' };

/**
 * JSON text as a Python literal, token for token: its numbers are Python's own syntax (`10.0`,
 * `1e3` floats, every digit of an int), its object keys stay in order, its strings are written again
 * as JSON.stringify writes them (which Python reads: no `\/`).
 */
const pythonFromJsonText = (text: string): string =>
  text.replace(JSON_TOKEN, (token) =>
    token[0] === '"' ? JSON.stringify(JSON.parse(token)) : (PYTHON_LITERALS[token] as string),
  );

/** A JSON value written as a Python literal (True/False/None; strings as JSON writes them, which Python reads). */
export const pythonLiteral = (value: unknown, indent = ''): string => {
  const inner = `${indent}    `;
  if (value instanceof JsonText) return pythonFromJsonText(value.text);
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'number') return Number.isFinite(value) ? JSON.stringify(value) : 'None';
  // JSON escapes are Python escapes too, except that Python would read `\/`: JSON.stringify never writes it.
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return `[\n${value.map((v) => `${inner}${pythonLiteral(v, inner)},`).join('\n')}\n${indent}]`;
  }
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0) return '{}';
  return `{\n${entries.map(([k, v]) => `${inner}${JSON.stringify(k)}: ${pythonLiteral(v, inner)},`).join('\n')}\n${indent}}`;
};

const indentAfterFirst = (text: string, by: string) => text.replaceAll('\n', `\n${by}`);

/**
 * The three snippets for one render. Each prints (curl) or saves (JavaScript, Python) the result:
 * the API answers with the finished job, whose `download_url` is the PDF.
 */
export const renderSnippets = (
  routes: SnippetRoutes,
  request: RenderRequest,
): Readonly<Record<SnippetLanguage, string>> => {
  const route = routes.createPdf;
  if (!route.acceptsApiKey) throw new Error(`${route.method} ${route.path} does not take API keys`);
  const body = checkedBody(route, request.body);
  const url = urlOf(route, request.apiUrl);
  // A value given as JsonText (a sample JSON.parse would change) is written as its text.
  const json = stringifyWithJsonText(body, 2);
  const asText = Object.values(body).some((v) => v instanceof JsonText);
  const jsBody = asText
    ? // A JavaScript object would put integer-like keys first and lose 10.0 and big integers: the JSON as text.
      `\`${json.replace(/[\\`]|\$\{/g, (m) => `\\${m}`)}\``
    : `JSON.stringify(${indentAfterFirst(json, '  ')})`;
  const curl = [
    `curl -sS -X ${route.method} ${shellQuote(url)} \\`,
    `  -H "Authorization: Bearer $${API_KEY_VARIABLE}" \\`,
    `  -H 'Content-Type: application/json' \\`,
    `  --data-binary ${shellQuote(json)}`,
  ].join('\n');
  const javascript = [
    `// Node 18 or later, in an ES module (top-level await); the answer is the finished job.`,
    `const res = await fetch(${JSON.stringify(url)}, {`,
    `  method: ${JSON.stringify(route.method)},`,
    `  headers: {`,
    `    Authorization: \`Bearer \${process.env.${API_KEY_VARIABLE}}\`,`,
    `    'Content-Type': 'application/json',`,
    `  },`,
    `  body: ${jsBody},`,
    `});`,
    `const job = await res.json();`,
    `if (!res.ok) throw new Error(\`\${job.error.code}: \${job.error.message}\`);`,
    `const pdf = await fetch(job.download_url);`,
    `await (await import('node:fs/promises')).writeFile('document.pdf', Buffer.from(await pdf.arrayBuffer()));`,
  ].join('\n');
  const python = [
    `import os`,
    `import requests`,
    ``,
    `res = requests.${route.method.toLowerCase()}(`,
    `    ${JSON.stringify(url)},`,
    `    headers={"Authorization": f"Bearer {os.environ['${API_KEY_VARIABLE}']}"},`,
    `    json=${pythonLiteral(body, '    ')},`,
    `)`,
    `job = res.json()`,
    `if not res.ok:`,
    `    raise RuntimeError(f"{job['error']['code']}: {job['error']['message']}")`,
    `with open("document.pdf", "wb") as f:`,
    `    f.write(requests.get(job["download_url"]).content)`,
  ].join('\n');
  return { curl, javascript, python };
};

/** The body that renders a saved template with its sample data and the page options chosen. */
export const templateRenderBody = (
  templateId: string,
  variables: Readonly<Record<string, unknown>>,
  options: Readonly<Record<string, unknown>> = {},
): Record<string, unknown> => ({ template_id: templateId, variables, ...options });
