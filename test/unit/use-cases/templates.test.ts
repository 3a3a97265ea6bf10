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
import { newSigningKeyId } from '../../../functions/domain/common/ids.js';
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

/** A signing key of the account's in the memory store (what POST /v1/signing-keys stores; no crypto read here). */
const storeSigningKey = async (accountId: string): Promise<string> => {
  const id = newSigningKeyId();
  await m.signingKeys.create(
    {
      id,
      account_id: accountId,
      name: 'Key',
      kind: 'uploaded',
      algorithm: 'RSA',
      certificate_pem: '-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n',
      certificate_subject: 'CN=Test',
      certificate_expires_at: '2030-01-01T00:00:00.000Z',
      kms_key_arn: null,
      created_at: '2026-11-28T10:00:00.000Z',
      sealed_private_key: 'sealed',
    },
    10,
  );
  return id;
};

const errorOf = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (x: unknown) => x as ServiceError,
  );

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

  it("refuses a signature whose key is unknown or another account's, naming pdf_options.signature.key_id, and saves nothing", async () => {
    const { templates, store } = setup();
    const adas = await storeSigningKey(ADA.accountId);
    const bobs = await storeSigningKey(BOB.accountId);
    const signed = (key_id: string) => ({ signature: { key_id, reason: 'Approved' } });
    for (const key_id of [bobs, newSigningKeyId(), 'not-a-key']) {
      const e = await errorOf(
        templates.create(ADA, { name: 'T', html: '<p>x</p>', pdf_options: signed(key_id), is_public: false }),
      );
      expect(e?.code).toBe('INVALID_SIGNING_KEY');
      expect(e?.message).toContain(`pdf_options.signature.key_id ${key_id}`);
      expect(e?.details).toEqual([
        { field: 'pdf_options.signature.key_id', issue: 'is not one of your signing keys' },
      ]);
    }
    expect(await store.listOwned(ADA.accountId, { limit: 10, offset: 0 })).toEqual([]);

    const t = await templates.create(ADA, {
      name: 'T',
      html: '<p>x</p>',
      pdf_options: signed(adas),
      is_public: false,
    });
    expect(t.pdf_options).toEqual(signed(adas));
    // A new version (options alone, or with a rename) is refused as a create is, and nothing changes.
    for (const body of [
      { pdf_options: signed(bobs) },
      { name: 'Renamed', html: '<p>y</p>', pdf_options: signed(bobs) },
    ]) {
      const e = await errorOf(templates.update(ADA, t.id, body));
      expect(e?.code).toBe('INVALID_SIGNING_KEY');
      expect(e?.details?.[0]?.field).toBe('pdf_options.signature.key_id');
    }
    expect(await templates.get(ADA, t.id)).toMatchObject({
      name: 'T',
      version: 1,
      pdf_options: signed(adas),
    });

    // Its key deleted later: the saved options stay (a render refuses them), and an edit that
    // gives no options is still saved; one that gives them again is refused.
    await m.signingKeys.delete(ADA.accountId, adas);
    expect(await templates.update(ADA, t.id, { html: '<p>z</p>' })).toMatchObject({
      version: 2,
      pdf_options: signed(adas),
    });
    expect(await codeOf(templates.update(ADA, t.id, { pdf_options: signed(adas) }))).toBe(
      'INVALID_SIGNING_KEY',
    );
  });
});
