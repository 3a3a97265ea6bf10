/**
 * Differential test: our Jinja2 engine against real Jinja2 3.1.
 *
 * The cases are test/templating/cases/*.json; test/templating/goldens.json holds what Jinja2
 * 3.1 makes of each (`Environment(autoescape=True, undefined=StrictUndefined)`), written by
 * `python3 test/templating/generate-goldens.py` (rerun it after changing a case).
 *
 * A case is identical when Jinja2 rendered it and we render exactly the same string, or when
 * Jinja2 raised and we throw a TemplateError of the same kind on the same line (when Jinja2
 * knows the line). Every other case must be listed, with a one-line reason, in
 * test/templating/known-differences.json; a case that becomes identical must leave that list.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { type Node, parseTree } from 'jsonc-parser';
import { describe, expect, it } from 'vitest';
import {
  parseTemplate,
  parseTemplateData,
  readTemplateDataText,
  renderTemplate,
  TemplateError,
} from '../../functions/templating/index.js';

interface Case {
  readonly name: string;
  readonly template: string;
  readonly variables?: Record<string, unknown>;
  /** The variables' JSON text as the case file has it (key order, `10.0`, big ints). */
  readonly variablesText?: string;
}

type GoldenError = {
  readonly type: string;
  readonly kind: 'syntax' | 'undefined' | 'runtime';
  readonly message: string;
  readonly line: number | null;
};
type Golden = ({ readonly output: string } | { readonly error: GoldenError }) & {
  /** jinja2.meta.find_undeclared_variables, sorted, for a template that parses. */
  readonly undeclared?: readonly string[];
};

type Ours = { readonly output: string } | { readonly error: TemplateError } | { readonly crash: unknown };

interface Difference {
  readonly case: Case;
  readonly golden: Golden;
  readonly ours: Ours;
}

const root = new URL('../templating/', import.meta.url);
const readJson = (url: URL): unknown => JSON.parse(readFileSync(url, 'utf8'));

const caseFiles = readdirSync(new URL('cases/', root))
  .filter((file) => file.endsWith('.json'))
  .sort();
/** Each case with its variables' own text, so they reach the engine as JSON sent them. */
const readCases = (file: string): Case[] => {
  const text = readFileSync(new URL(`cases/${file}`, root), 'utf8');
  const tree = parseTree(text) as Node;
  return (JSON.parse(text) as Case[]).map((c, i) => {
    const node = tree.children?.[i]?.children?.find((p) => p.children?.[0]?.value === 'variables')
      ?.children?.[1];
    return node ? { ...c, variablesText: text.slice(node.offset, node.offset + node.length) } : c;
  });
};
const cases: Case[] = caseFiles.flatMap(readCases);
const goldenFile = readJson(new URL('goldens.json', root)) as {
  generator: string;
  cases: Record<string, Golden>;
};
const goldens = goldenFile.cases;
const knownDifferences = readJson(new URL('known-differences.json', root)) as Record<string, string>;

const render = (c: Case): Ours => {
  try {
    // Exactly what the service does: the API reads the variables' JSON text and writes the text it
    // hands the renderer (readTemplateDataText), which reads that back (parseTemplateData).
    const sent = readTemplateDataText(c.variablesText ?? '{}').text;
    return { output: renderTemplate(c.template, parseTemplateData(sent)) };
  } catch (e) {
    return e instanceof TemplateError ? { error: e } : { crash: e };
  }
};

const identical = (golden: Golden, ours: Ours): boolean => {
  if ('output' in golden) return 'output' in ours && ours.output === golden.output;
  if (!('error' in ours)) return false;
  const { kind, line } = golden.error;
  return ours.error.kind === kind && (line === null || ours.error.line === line);
};

const MAX = 400;
const clip = (s: string): string => (s.length > MAX ? `${s.slice(0, MAX)}… (${s.length} chars)` : s);
const show = (s: string): string => clip(JSON.stringify(s));

const describeGolden = (golden: Golden): string =>
  'output' in golden
    ? `output ${show(golden.output)}`
    : `${golden.error.kind} error on line ${golden.error.line ?? '?'}: ${golden.error.type}: ${clip(golden.error.message)}`;

const describeOurs = (ours: Ours): string => {
  if ('output' in ours) return `output ${show(ours.output)}`;
  if ('error' in ours)
    return `${ours.error.kind} error on line ${ours.error.line ?? '?'}: ${clip(ours.error.message)}`;
  const crash = ours.crash;
  return `not a TemplateError: ${clip(crash instanceof Error ? `${crash.name}: ${crash.message}` : String(crash))}`;
};

const report = (d: Difference): string =>
  [
    `● ${d.case.name}`,
    `  template:  ${show(d.case.template)}`,
    ...(d.case.variables ? [`  variables: ${clip(JSON.stringify(d.case.variables))}`] : []),
    `  jinja2:    ${describeGolden(d.golden)}`,
    `  ours:      ${describeOurs(d.ours)}`,
  ].join('\n');

describe(`Jinja2 differential corpus (goldens by ${goldenFile.generator})`, () => {
  it('has exactly one golden per case and unique case names', () => {
    const names = cases.map((c) => c.name);
    const duplicates = names.filter((name, i) => names.indexOf(name) !== i);
    expect(duplicates, 'duplicate case names').toEqual([]);
    const withoutGolden = names.filter((name) => !(name in goldens));
    expect(withoutGolden, 'cases without a golden: rerun test/templating/generate-goldens.py').toEqual([]);
    const withoutCase = Object.keys(goldens).filter((name) => !names.includes(name));
    expect(withoutCase, 'goldens without a case: rerun test/templating/generate-goldens.py').toEqual([]);
    const unknownListed = Object.keys(knownDifferences).filter((name) => !names.includes(name));
    expect(unknownListed, 'known-differences.json names cases that do not exist').toEqual([]);
  });

  // Render once; both assertions below read the result.
  const differences: Difference[] = [];
  let total = 0;
  const run = () => {
    if (total > 0) return;
    for (const c of cases) {
      const golden = goldens[c.name];
      if (!golden) continue;
      total += 1;
      const ours = render(c);
      if (!identical(golden, ours)) differences.push({ case: c, golden, ours });
    }
    const same = total - differences.length;
    const percent = total ? ((100 * same) / total).toFixed(1) : '0.0';
    console.log(`jinja2 differential: ${same}/${total} identical (${percent}%)`);
  };

  it('renders at least 98% of at least 900 cases exactly as Jinja2 does', () => {
    run();
    expect(total).toBeGreaterThanOrEqual(900);
    expect((total - differences.length) / total).toBeGreaterThanOrEqual(0.98);
  });

  it("lists each template's undeclared names exactly as jinja2.meta.find_undeclared_variables does", () => {
    const wrong = cases.flatMap((c) => {
      const expected = goldens[c.name]?.undeclared;
      if (!expected || c.name in knownDifferences) return [];
      let ours: readonly string[] | string;
      try {
        ours = parseTemplate(c.template).undeclared;
      } catch (e) {
        ours = e instanceof Error ? e.message : String(e);
      }
      return JSON.stringify(ours) === JSON.stringify(expected)
        ? []
        : [`${c.name}: jinja2 ${JSON.stringify(expected)}, ours ${JSON.stringify(ours)}`];
    });
    expect(wrong).toEqual([]);
  });

  it('never refuses at parse time a case Jinja2 renders (required names are all given)', () => {
    const refused = cases.flatMap((c) => {
      const golden = goldens[c.name];
      if (!golden || !('output' in golden) || c.name in knownDifferences) return [];
      let required: readonly { name: string }[] = [];
      try {
        required = parseTemplate(c.template).required;
      } catch {
        return [`${c.name}: does not parse`];
      }
      const missing = required.filter((r) => !(r.name in (c.variables ?? {})));
      return missing.length ? [`${c.name}: requires ${missing.map((r) => r.name).join(', ')}`] : [];
    });
    expect(refused).toEqual([]);
  });

  it('differs from Jinja2 on exactly the cases listed in known-differences.json', () => {
    run();
    const differing = new Set(differences.map((d) => d.case.name));
    const unexpected = differences.filter((d) => !(d.case.name in knownDifferences));
    const fixed = Object.keys(knownDifferences).filter((name) => !differing.has(name));
    const problems: string[] = [];
    if (unexpected.length > 0) {
      problems.push(
        `${unexpected.length} case(s) differ from Jinja2 and are not in known-differences.json:\n\n` +
          unexpected.map(report).join('\n\n'),
      );
    }
    if (fixed.length > 0) {
      problems.push(
        `${fixed.length} case(s) in known-differences.json now match Jinja2; remove them from the list:\n` +
          fixed.map((name) => `  ${name}`).join('\n'),
      );
    }
    if (problems.length > 0) console.log(problems.join('\n\n'));
    expect(
      { unexpected: unexpected.map((d) => d.case.name), fixed },
      'see the report above for each case',
    ).toEqual({ unexpected: [], fixed: [] });
  });
});
