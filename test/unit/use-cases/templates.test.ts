/**
 * The template use cases (domain/template-management.ts) on the memory template store (which
 * passes the store's contract, test/contract/templates.contract.ts) and the real template parser.
 */
import { describe, expect, it } from 'vitest';
import { createMemoryTemplateStore } from '../../../functions/adapters/memory/templates.js';
import { ServiceError } from '../../../functions/domain/common/errors.js';
import type { Principal } from '../../../functions/domain/common/principal.js';
import { createTemplateManagement } from '../../../functions/domain/templates/template-management.js';
import { templateParser } from '../../../functions/templating/parse-pool.js';
import { testClock } from '../../helpers/dynalite.js';

const ADA: Principal = { accountId: 'acct-ada', email: undefined, credential: 'session', plan: 'free' };
const BOB: Principal = { ...ADA, accountId: 'acct-bob' };

const setup = () => {
  const clock = testClock('2026-11-28T10:00:00.000Z');
  const store = createMemoryTemplateStore(clock);
  return { clock, store, templates: createTemplateManagement({ store, parser: templateParser }) };
};

const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: unknown) => (e instanceof ServiceError ? e.code : String(e)),
  );

describe('template management', () => {
  it('saves a template with the variables its parts read, and each edit as a new version', async () => {
    const { templates, store } = setup();
    const created = await templates.create(ADA, {
      name: 'Invoice',
      html: '<p>{{ customer.name }} {% for l in lines %}{{ l }}{% endfor %}</p>',
      header_html: '<span>{{ title }}</span>',
      is_public: false,
    });
    expect(created).toMatchObject({
      version: 1,
      variables: ['customer', 'lines', 'title'],
      owner_user_id: ADA.accountId,
    });
    const updated = await templates.update(ADA, created.id, { html: '<p>{{ total }}</p>' });
    expect(updated).toMatchObject({
      version: 2,
      variables: ['title', 'total'],
      header_html: '<span>{{ title }}</span>',
    });
    expect(await store.readVersion(created.id, 1)).toMatchObject({ html: created.html });
    expect((await templates.get(ADA, created.id)).html).toBe('<p>{{ total }}</p>');
  });

  it('refuses a template that does not parse, naming the field and line, and saves nothing', async () => {
    const { templates, store } = setup();
    const e = await templates
      .create(ADA, { name: 'Broken', html: '<p>ok</p>\n{% if %}', is_public: false })
      .then(
        () => undefined,
        (x: unknown) => x as ServiceError,
      );
    expect(e?.code).toBe('INVALID_HTML_TEMPLATE');
    expect(e?.details?.[0]).toMatchObject({ field: 'html' });
    expect(await store.listOwned(ADA.accountId, { limit: 10, offset: 0 })).toEqual([]);
  });

  it("keeps another account's private template from it, and shows a public one from its public version on", async () => {
    const { templates } = setup();
    const t = await templates.create(ADA, { name: 'T', html: '<p>v1</p>', is_public: false });
    expect(await codeOf(templates.get(BOB, t.id))).toBe('PDF_TEMPLATE_NOT_FOUND');
    expect(await codeOf(templates.update(BOB, t.id, { name: 'mine' }))).toBe('PDF_TEMPLATE_NOT_FOUND');
    await templates.update(ADA, t.id, { html: '<p>v2</p>' });
    await templates.setVisibility(ADA, t.id, { is_public: true });
    expect(await templates.get(BOB, t.id)).toMatchObject({
      version: 2,
      is_public: true,
      public_since_version: 2,
    });
    expect(await codeOf(templates.remove(BOB, t.id))).toBe('PDF_TEMPLATE_NOT_FOUND');
    await templates.remove(ADA, t.id);
    expect(await codeOf(templates.get(ADA, t.id))).toBe('PDF_TEMPLATE_NOT_FOUND');
  });
});
