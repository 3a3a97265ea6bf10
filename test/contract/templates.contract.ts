/**
 * The TemplateStore port's contract (domain/templates.ts): the same cases for the memory store and
 * the DynamoDB adapter on dynalite.
 */
import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../functions/domain/common/errors.js';
import { newTemplateId } from '../../functions/domain/common/ids.js';
import type { TemplateContent } from '../../functions/domain/templates/template-content.js';
import type { TemplateStore } from '../../functions/domain/templates/templates.js';
import { clockAt, type StoreBackend, unique } from './stores.js';

const content = (html: string): TemplateContent => ({
  html,
  variables: ['name'],
  header_html: '<span>{{ name }}</span>',
  footer_html: null,
  sample_variables: null,
  pdf_options: { format: 'A5' },
});

const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: unknown) => (e instanceof ServiceError ? e.code : String(e)),
  );

export const templatesContract = (backend: StoreBackend<TemplateStore>): void => {
  describe(`the template store on ${backend.name}`, () => {
    const setup = () => {
      const clock = clockAt();
      return { clock, templates: backend.create(clock, {}), owner: unique('acct'), other: unique('acct') };
    };

    it('keeps every version; the owner reads any, the current one by default', async () => {
      const { templates, owner, clock } = setup();
      const id = newTemplateId();
      const created = await templates.create(
        { id, owner_user_id: owner, name: 'Invoice', is_public: false },
        content('<p>v1</p>'),
      );
      expect(created).toMatchObject({
        id,
        name: 'Invoice',
        version: 1,
        html: '<p>v1</p>',
        header_html: '<span>{{ name }}</span>',
        footer_html: null,
        pdf_options: { format: 'A5' },
        is_public: false,
        public_since_version: null,
        renders_offline_for_others: true,
        created_at: '2026-11-28T10:00:00.000Z',
      });
      clock.advance(1000);
      const revised = await templates.revise(id, owner, content('<p>v2</p>'), 'Invoice 2');
      expect(revised).toMatchObject({
        version: 2,
        html: '<p>v2</p>',
        name: 'Invoice 2',
        updated_at: '2026-11-28T10:00:01.000Z',
      });
      expect(await templates.getReadable(id, owner)).toMatchObject({ version: 2, html: '<p>v2</p>' });
      expect(await templates.getReadable(id, owner, 1)).toMatchObject({
        version: 1,
        html: '<p>v1</p>',
        name: 'Invoice 2',
      });
      expect(await codeOf(templates.getReadable(id, owner, 3))).toBe('PDF_TEMPLATE_NOT_FOUND');
      expect(await templates.readVersion(id, 1)).toMatchObject({ html: '<p>v1</p>' });
      expect(await templates.readVersion(id, 9)).toBeUndefined();
    });

    it('lets another account read a public template from the version it was made public at, and nothing private', async () => {
      const { templates, owner, other } = setup();
      const id = newTemplateId();
      await templates.create({ id, owner_user_id: owner, name: 'T', is_public: false }, content('<p>v1</p>'));
      await templates.revise(id, owner, content('<p>v2</p>'));
      expect(await codeOf(templates.getReadable(id, other))).toBe('PDF_TEMPLATE_NOT_FOUND');
      expect(await templates.setVisibility(id, owner, true)).toMatchObject({
        is_public: true,
        public_since_version: 2,
      });
      expect(await templates.getReadable(id, other)).toMatchObject({ version: 2, html: '<p>v2</p>' });
      expect(await codeOf(templates.getReadable(id, other, 1))).toBe('PDF_TEMPLATE_NOT_FOUND');
      await templates.revise(id, owner, content('<p>v3</p>'));
      expect(await templates.getReadable(id, other)).toMatchObject({ version: 3 });
      expect((await templates.listPublic({ limit: 1000, offset: 0 })).map((t) => t.id)).toContain(id);
      expect(await templates.setVisibility(id, owner, false)).toMatchObject({
        is_public: false,
        public_since_version: null,
      });
      expect(await codeOf(templates.getReadable(id, other))).toBe('PDF_TEMPLATE_NOT_FOUND');
      expect((await templates.listPublic({ limit: 1000, offset: 0 })).map((t) => t.id)).not.toContain(id);
      // Public again: from the then current version.
      expect(await templates.setVisibility(id, owner, true)).toMatchObject({ public_since_version: 3 });
    });

    it('lets only the owner rename, revise, publish or remove a template', async () => {
      const { templates, owner, other } = setup();
      const id = newTemplateId();
      await templates.create({ id, owner_user_id: owner, name: 'T', is_public: true }, content('<p>v1</p>'));
      // One at a time: each refusal is awaited as it is made (made all at once, a later one
      // rejected before its turn came, unhandled).
      for (const attempt of [
        () => templates.rename(id, other, 'x'),
        () => templates.revise(id, other, content('<p>x</p>')),
        () => templates.setVisibility(id, other, false),
        () => templates.remove(id, other),
        () => templates.rename(newTemplateId(), owner, 'x'),
      ]) {
        expect(await codeOf(attempt())).toBe('PDF_TEMPLATE_NOT_FOUND');
      }
      expect(await templates.rename(id, owner, 'Renamed')).toMatchObject({ name: 'Renamed', version: 1 });
      await templates.remove(id, owner);
      expect(await codeOf(templates.getReadable(id, owner))).toBe('PDF_TEMPLATE_NOT_FOUND');
      expect(await templates.readVersion(id, 1)).toBeUndefined();
    });

    it("lists an account's templates newest first, a page at a time", async () => {
      const { templates, owner } = setup();
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const id = newTemplateId();
        ids.push(id);
        await templates.create(
          { id, owner_user_id: owner, name: `T${i}`, is_public: false },
          content(`<p>${i}</p>`),
        );
        await new Promise((r) => setTimeout(r, 2)); // ids of another millisecond
      }
      const newest = [...ids].reverse();
      expect((await templates.listOwned(owner, { limit: 2, offset: 0 })).map((t) => t.id)).toEqual(
        newest.slice(0, 2),
      );
      expect((await templates.listOwned(owner, { limit: 2, offset: 2 })).map((t) => t.id)).toEqual(
        newest.slice(2),
      );
      expect((await templates.listOwned(owner, { limit: 2, offset: 2 }))[0]).toMatchObject({
        html: '<p>0</p>',
        version: 1,
      });
      expect(await templates.listOwned(unique('acct'), { limit: 10, offset: 0 })).toEqual([]);
    });
  });
};
