/**
 * The template use cases (domain/templates/template-management.ts) as the composition root builds
 * them (functions/services.ts, templateManagement), on the memory parts
 * (test/helpers/memory-services.ts: the memory template store, which passes the store's contract,
 * test/contract/templates.contract.ts) with the real template parser. A template is saved with the
 * variables its parts read, each edit a new version; one that does not parse is refused naming
 * the field, and nothing is saved or changed; another account sees only public ones.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ServiceError } from '../../../functions/domain/common/errors.js';
import { templateManagement } from '../../../functions/services.js';
import { caller, type MemoryServices, memoryServices } from '../../helpers/memory-services.js';

let m: MemoryServices;
afterEach(async () => {
  await m?.close();
});

const ADA = caller();
const BOB = caller();

const setup = () => {
  m = memoryServices({ at: '2026-11-28T10:00:00.000Z' });
  return { clock: m.clock, store: m.templates, templates: m.services.get(templateManagement) };
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

  it('refuses an edit whose footer does not parse, naming it, and keeps the current version as it was', async () => {
    const { templates, clock } = setup();
    const t = await templates.create(ADA, { name: 'T', html: '<p>{{ a }}</p>', is_public: false });
    clock.advance(1000);
    const e = await templates.update(ADA, t.id, { footer_html: '{{ page' }).then(
      () => undefined,
      (x: unknown) => x as ServiceError,
    );
    expect(e?.code).toBe('INVALID_HTML_TEMPLATE');
    expect(e?.details?.[0]).toMatchObject({ field: 'footer_html' });
    expect(await templates.get(ADA, t.id)).toMatchObject({
      version: 1,
      footer_html: null,
      variables: ['a'],
      updated_at: t.updated_at,
    });
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
