/**
 * The starter templates (issue 40) on a fresh local stack: GET /v1/templates/public lists them,
 * `?starters=true` lists only them (an account's own public template is not among them), and
 * each renders for a new account from its saved sample data and options, as the dashboard's
 * "New from starter" does: poppler reads their text, and the statement's table of contents and
 * the report's pages are there.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { STARTER_ACCOUNT_ID } from '../../functions/domain/templates/templates.js';
import { STARTERS } from '../../lib/starters/starters.js';
import { type Json, useLocalStack } from '../helpers/local-stack.js';
import { pdfinfo, pdfText } from '../helpers/pdf-readers.js';
import { newAccount, saveTemplate, type TestAccount } from '../helpers/template-fixtures.js';

const local = useLocalStack();
let account: TestAccount;
let starters: Json[];
beforeAll(async () => {
  account = await newAccount(local, 'starters');
  await saveTemplate(local, account.session, { name: 'Mine, public', is_public: true });
  const res = await local.api('/v1/templates/public?starters=true&limit=100', { token: account.key });
  expect(res.status, res.text).toBe(200);
  starters = res.json;
});

describe('the starters', () => {
  it('are listed alone with ?starters=true, in order, each public with sample data and options', () => {
    expect(starters.map((t) => t.name)).toEqual(STARTERS.map((s) => s.name));
    expect(STARTERS.length).toBeGreaterThanOrEqual(8);
    for (const t of starters) {
      expect(t.owner_user_id).toBe(STARTER_ACCOUNT_ID);
      expect(t.is_public).toBe(true);
      expect(Object.keys(t.sample_variables ?? {}).length).toBeGreaterThan(0);
      expect(t.pdf_options?.format).toBeDefined();
    }
  });

  it('are among every public template, beside an account’s own', async () => {
    const all: Json[] = [];
    for (let offset = 0; ; offset += 100) {
      const page = await local.api(`/v1/templates/public?limit=100&offset=${offset}`, { token: account.key });
      if (page.json.length === 0) break;
      all.push(...page.json);
    }
    const names = all.map((t) => t.name);
    for (const s of STARTERS) expect(names).toContain(s.name);
    expect(names).toContain('Mine, public');
  });

  it('refuses a starters value that is not true or false', async () => {
    const res = await local.api('/v1/templates/public?starters=yes', { token: account.key });
    expect(res.status).toBe(422);
    expect(res.json.error.details).toContainEqual(expect.objectContaining({ field: 'starters' }));
  });

  it.each(STARTERS.map((s) => [s.name, s] as const))('%s renders from its sample data', async (name) => {
    const template = starters.find((t) => t.name === name);
    const res = await local.api('/v1/pdf', {
      method: 'POST',
      token: account.key,
      body: {
        template_id: template.id,
        template_version: template.version,
        variables: template.sample_variables,
      },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.json.diagnostics?.entries ?? []).toEqual([]);
    const pdf = new Uint8Array(await (await fetch(res.json.download_url)).arrayBuffer());
    const text = (await pdfText(pdf)).stdout;
    const sample = template.sample_variables;
    // Something of its sample data printed, as the person reading it would see it.
    const expected: Record<string, string> = {
      Invoice: sample.number,
      Receipt: sample.shop?.name,
      Quote: sample.number,
      'Account statement': 'September 2026',
      Certificate: sample.recipient,
      'Business letter': sample.subject,
      'Shipping label': sample.tracking,
      'Multi-page report': 'Looking ahead',
    };
    expect(text.replace(/\s+/g, ' ')).toContain(expected[name]);
    const pages = Number((await pdfinfo(pdf)).Pages);
    if (name === 'Account statement') {
      expect(pages).toBeGreaterThanOrEqual(5);
      // Its contents name each month's page, filled in by paged_media.
      expect(text).toMatch(/July 2026\s+… page 2/);
      expect(text).toMatch(/Summary\s+… page 5/);
    }
    if (name === 'Multi-page report') expect(pages).toBeGreaterThanOrEqual(5);
  });
});
