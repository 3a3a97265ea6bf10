/**
 * /v1/templates over HTTP against the real local stack: the record, the contract's codes for bad
 * input, lists from the indexes, and who may do what: every route (and rendering by template_id)
 * × {the owner's session, another account's session, the owner's API key, another account's API
 * key} × {a private template, a public one}, each cell with its exact status and code.
 */
import { describe, expect, it } from 'vitest';
import { templateSchema } from '../../functions/templates/routes.js';
import { type ApiResponse, type Json, useLocalStack } from '../helpers/local-stack.js';
import { MiB, newAccount, saveTemplate, type TestAccount } from '../helpers/template-fixtures.js';

// Its own: it asserts the order of GET /v1/templates/public, which lists every account's templates.
const local = useLocalStack({ ownStack: true });

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const expectError = (res: ApiResponse, status: number, code: string) => {
  expect(res.status, res.text).toBe(status);
  expect(res.json.error.code).toBe(code);
  expect(res.json.error.request_id).toBe(res.headers.get('x-request-id'));
};

describe('POST /v1/templates and GET /v1/templates/{id}', () => {
  it('saves a template and answers its record: spec fields, variables, version 1', async () => {
    const owner = await newAccount(local);
    const html = `{% set greeting = "Hello" %}<h1>{{ greeting }} {{ customer.name }}</h1>
{% for line in lines %}<p>{{ line.item }} {{ currency }}</p>{% endfor %}{% if note is defined %}{{ note }}{% endif %}`;
    const res = await local.api('/v1/templates', {
      method: 'POST',
      token: owner.session,
      body: { name: '  Invoice  ', html },
    });
    expect(res.status, res.text).toBe(201);
    const t = res.json;
    expect(() => templateSchema.strict().parse(t)).not.toThrow();
    expect(t).toMatchObject({
      owner_user_id: owner.id,
      name: 'Invoice',
      html,
      is_public: false,
      version: 1,
      // Sorted; `greeting` and `line` are defined by the template itself.
      variables: ['currency', 'customer', 'lines', 'note'],
    });
    expect(t.id).toMatch(/^tpl_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(t.created_at).toMatch(ISO_MS);
    expect(t.updated_at).toBe(t.created_at);

    const read = await local.api(`/v1/templates/${t.id}`, { token: owner.session });
    expect(read.status).toBe(200);
    expect(read.json).toEqual(t);
    expect((await local.api(`/v1/templates/${t.id}`, { token: owner.key })).json).toEqual(t);
  });

  it('is_public may be set on creation', async () => {
    const owner = await newAccount(local);
    const t = await saveTemplate(local, owner.session, { is_public: true });
    expect(t.is_public).toBe(true);
  });

  const name200 = '🙂'.repeat(200); // 200 characters, 400 UTF-16 units
  it.each([
    ['an empty name', { name: '' }, 'INVALID_TEMPLATE_NAME', 'name'],
    ['a blank name', { name: '   ' }, 'INVALID_TEMPLATE_NAME', 'name'],
    ['201 characters', { name: 'x'.repeat(201) }, 'INVALID_TEMPLATE_NAME', 'name'],
    ['201 characters after trimming', { name: ` ${name200}x ` }, 'INVALID_TEMPLATE_NAME', 'name'],
    ['a name that is not a string', { name: 5 }, 'INVALID_TEMPLATE_NAME', 'name'],
    ['no name', { name: undefined }, 'INVALID_TEMPLATE_NAME', 'name'],
    ['no html', { html: undefined }, 'INVALID_HTML_CONTENT', 'html'],
    ['blank html', { html: ' \n ' }, 'INVALID_HTML_CONTENT', 'html'],
    ['html that is not a string', { html: ['<p>'] }, 'INVALID_HTML_CONTENT', 'html'],
    ['html with a NUL', { html: '<p>\u0000</p>' }, 'INVALID_HTML_CONTENT', 'html'],
    ['html with an unpaired surrogate', { html: '<p>\ud800</p>' }, 'INVALID_HTML_CONTENT', 'html'],
    ['html one byte over 1 MiB', { html: `é${'x'.repeat(MiB - 1)}` }, 'HTML_CONTENT_TOO_LARGE', 'html'],
    ['is_public not a boolean', { is_public: 'yes' }, 'VALIDATION_ERROR', 'is_public'],
    ['an unknown field', { public: true }, 'VALIDATION_ERROR', 'public'],
  ])('refuses %s', async (_, fields, code, field) => {
    const owner = await newAccount(local);
    const res = await local.api('/v1/templates', {
      method: 'POST',
      token: owner.session,
      body: { name: 'n', html: '<p>x</p>', ...fields },
    });
    expectError(res, 422, code);
    expect(res.json.error.details[0].field).toBe(field);
    expect((await local.api('/v1/templates', { token: owner.session })).json).toEqual([]);
  });

  it('accepts a name of exactly 200 characters (code points) and html of exactly 1 MiB', async () => {
    const owner = await newAccount(local);
    const t = await saveTemplate(local, owner.session, { name: name200, html: `é${'x'.repeat(MiB - 2)}` });
    expect(t.name).toBe(name200);
  });

  it('refuses html that does not parse with INVALID_HTML_TEMPLATE and its line, without running it', async () => {
    const owner = await newAccount(local);
    const res = await local.api('/v1/templates', {
      method: 'POST',
      token: owner.session,
      body: { name: 'broken', html: '<p>one</p>\n<p>{% if %}</p>' },
    });
    expectError(res, 422, 'INVALID_HTML_TEMPLATE');
    expect(res.json.error.details).toEqual([expect.objectContaining({ field: 'html', line: 2 })]);
    // Runtime errors are not a save's business: it only parses.
    const divides = await saveTemplate(local, owner.session, { html: '{{ 1 / 0 }}{{ x.y.z }}' });
    expect(divides.variables).toEqual(['x']);
  });

  it('refuses html that would not fit one answer: control characters travel as 6-character escapes', async () => {
    const owner = await newAccount(local);
    // 800,000 bytes of html (under 1 MiB), but 5.6 MB as a Lambda response.
    const res = await local.api('/v1/templates', {
      method: 'POST',
      token: owner.session,
      body: { name: 'controls', html: `<p>${'\u0001'.repeat(800_000)}</p>` },
    });
    expectError(res, 422, 'HTML_CONTENT_TOO_LARGE');
    expect(res.json.error.details[0].field).toBe('html');
  });

  it('answers 404 PDF_TEMPLATE_NOT_FOUND for ids that name no template', async () => {
    const owner = await newAccount(local);
    for (const id of ['tpl_01ARZ3NDEKTSV4RRFFQ69G5FAV', 'nonsense', 'public%20x']) {
      expectError(
        await local.api(`/v1/templates/${id}`, { token: owner.session }),
        404,
        'PDF_TEMPLATE_NOT_FOUND',
      );
    }
  });
});

describe('PATCH /v1/templates/{id}', () => {
  it('renames without a new version, and a change of html makes the next version with its variables', async () => {
    const owner = await newAccount(local);
    const t = await saveTemplate(local, owner.session, { html: '<p>{{ a }}</p>' });
    await new Promise((r) => setTimeout(r, 5));

    const renamed = await local.api(`/v1/templates/${t.id}`, {
      method: 'PATCH',
      token: owner.session,
      body: { name: ' Renamed ' },
    });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.json).toMatchObject({
      name: 'Renamed',
      version: 1,
      html: '<p>{{ a }}</p>',
      variables: ['a'],
    });
    expect(renamed.json.updated_at > t.updated_at).toBe(true);
    expect(renamed.json.created_at).toBe(t.created_at);

    const edited = await local.api(`/v1/templates/${t.id}`, {
      method: 'PATCH',
      token: owner.session,
      body: { html: '<p>{{ b }} {{ c }}</p>' },
    });
    expect(edited.json).toMatchObject({
      name: 'Renamed',
      version: 2,
      html: '<p>{{ b }} {{ c }}</p>',
      variables: ['b', 'c'],
    });
    const both = await local.api(`/v1/templates/${t.id}`, {
      method: 'PATCH',
      token: owner.session,
      body: { name: 'Both', html: '<p>{{ d }}</p>' },
    });
    expect(both.json).toMatchObject({ name: 'Both', version: 3, variables: ['d'] });
    expect((await local.api(`/v1/templates/${t.id}`, { token: owner.session })).json).toEqual(both.json);
  });

  it.each([
    ['an empty body', {}, 'VALIDATION_ERROR'],
    ['is_public (the visibility endpoint changes it)', { is_public: true }, 'VALIDATION_ERROR'],
    ['an unknown field', { name: 'x', title: 'y' }, 'VALIDATION_ERROR'],
    ['a blank name', { name: ' ' }, 'INVALID_TEMPLATE_NAME'],
    ['a null name', { name: null }, 'INVALID_TEMPLATE_NAME'],
    ['blank html', { html: '' }, 'INVALID_HTML_CONTENT'],
    ['html over 1 MiB', { html: 'x'.repeat(MiB + 1) }, 'HTML_CONTENT_TOO_LARGE'],
    ['html that does not parse', { html: '{% for %}' }, 'INVALID_HTML_TEMPLATE'],
  ])('refuses %s, changing nothing', async (_, body, code) => {
    const owner = await newAccount(local);
    const t = await saveTemplate(local, owner.session, {});
    expectError(
      await local.api(`/v1/templates/${t.id}`, { method: 'PATCH', token: owner.session, body }),
      422,
      code,
    );
    expect((await local.api(`/v1/templates/${t.id}`, { token: owner.session })).json).toEqual(t);
  });

  it('checks the body before looking the template up (contract precedence: 422 before 404)', async () => {
    const owner = await newAccount(local);
    const res = await local.api('/v1/templates/tpl_01ARZ3NDEKTSV4RRFFQ69G5FAV', {
      method: 'PATCH',
      token: owner.session,
      body: { name: '' },
    });
    expectError(res, 422, 'INVALID_TEMPLATE_NAME');
  });
});

describe('PATCH /v1/templates/{id}/visibility', () => {
  it('switches is_public both ways', async () => {
    const owner = await newAccount(local);
    const t = await saveTemplate(local, owner.session, {});
    const path = `/v1/templates/${t.id}/visibility`;
    const on = await local.api(path, { method: 'PATCH', token: owner.session, body: { is_public: true } });
    expect(on.status, on.text).toBe(200);
    expect(on.json).toMatchObject({ id: t.id, is_public: true, version: 1, html: t.html });
    const off = await local.api(path, { method: 'PATCH', token: owner.session, body: { is_public: false } });
    expect(off.json.is_public).toBe(false);
  });

  it.each([
    ['an empty body', {}],
    ['a string', { is_public: 'true' }],
    ['null', { is_public: null }],
    ['an unknown field', { is_public: true, name: 'x' }],
  ])('refuses %s with VALIDATION_ERROR', async (_, body) => {
    const owner = await newAccount(local);
    const t = await saveTemplate(local, owner.session, {});
    const res = await local.api(`/v1/templates/${t.id}/visibility`, {
      method: 'PATCH',
      token: owner.session,
      body,
    });
    expectError(res, 422, 'VALIDATION_ERROR');
  });
});

describe('lists', () => {
  it('GET /v1/templates: the caller’s own, newest first, by limit and offset', async () => {
    const owner = await newAccount(local);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push((await saveTemplate(local, owner.session, { name: `t${i}`, is_public: i === 0 })).id);
    const newest = [...ids].reverse();
    const list = async (query: string) =>
      (await local.api(`/v1/templates${query}`, { token: owner.session })).json.map((t: Json) => t.id);
    expect(await list('')).toEqual(newest);
    expect(await list('?limit=2')).toEqual(newest.slice(0, 2));
    expect(await list('?limit=2&offset=2')).toEqual(newest.slice(2, 4));
    expect(await list('?offset=4')).toEqual(newest.slice(4));
    expect(await list('?offset=5')).toEqual([]);
    const full = (await local.api('/v1/templates?limit=1', { token: owner.session })).json[0];
    expect(() => templateSchema.strict().parse(full)).not.toThrow();
    // Another account's list has none of them.
    const other = await newAccount(local);
    expect((await local.api('/v1/templates', { token: other.session })).json).toEqual([]);
  });

  it('GET /v1/templates/public: every account’s public templates, newest first', async () => {
    const a = await newAccount(local);
    const b = await newAccount(local);
    const first = await saveTemplate(local, a.session, { is_public: true });
    await saveTemplate(local, a.session, { is_public: false });
    const second = await saveTemplate(local, b.session, { is_public: true });
    const res = await local.api('/v1/templates/public?limit=100', { token: a.key });
    expect(res.status).toBe(200);
    const ids = res.json.map((t: Json) => t.id);
    expect(ids.indexOf(second.id)).toBeLessThan(ids.indexOf(first.id));
    expect(ids.indexOf(first.id)).toBeGreaterThanOrEqual(0);
    expect(res.json.every((t: Json) => t.is_public === true)).toBe(true);
    const page = await local.api('/v1/templates/public?limit=1&offset=0', { token: b.session });
    expect(page.json.map((t: Json) => t.id)).toEqual([ids[0]]);
  });

  it.each(['limit=0', 'limit=101', 'limit=abc', 'limit=1.5', 'offset=-1', 'offset=10001', 'offset=x'])(
    'refuses %s with VALIDATION_ERROR on both lists',
    async (query) => {
      const owner = await newAccount(local);
      expectError(
        await local.api(`/v1/templates?${query}`, { token: owner.session }),
        422,
        'VALIDATION_ERROR',
      );
      expectError(
        await local.api(`/v1/templates/public?${query}`, { token: owner.key }),
        422,
        'VALIDATION_ERROR',
      );
    },
  );

  it('accepts offset 10,000 and limit 100', async () => {
    const owner = await newAccount(local);
    const res = await local.api('/v1/templates?limit=100&offset=10000', { token: owner.session });
    expect(res.status).toBe(200);
    expect(res.json).toEqual([]);
  });
});

describe('variables: a render by template_id that lacks one answers 422 naming it', () => {
  it('names the first missing variable, and renders once it is given', async () => {
    const owner = await newAccount(local);
    const t = await saveTemplate(local, owner.session, {
      html: '<h1>{{ title }}</h1>\n{% for i in items %}<p>{{ i }}</p>{% endfor %}',
    });
    expect(t.variables).toEqual(['items', 'title']);
    const res = await local.api('/v1/pdf', {
      method: 'POST',
      token: owner.key,
      body: { template_id: t.id, variables: { items: [] } },
    });
    expectError(res, 422, 'INVALID_HTML_TEMPLATE');
    expect(res.json.error.details).toEqual([
      { field: 'template_id', issue: "Variable 'title' is undefined (line 1)", line: 1, name: 'title' },
    ]);
    const ok = await local.api('/v1/pdf', {
      method: 'POST',
      token: owner.key,
      body: { template_id: t.id, variables: { items: [1], title: 'T' } },
    });
    expect(ok.status, ok.text).toBe(201);
  });
});

describe('template_version on POST /v1/pdf', () => {
  it.each([
    ['with html instead of template_id', { html: '<p>x</p>', template_version: 1 }],
    ['zero', { template_id: 'TEMPLATE', template_version: 0 }],
    ['a fraction', { template_id: 'TEMPLATE', template_version: 1.5 }],
    ['a string', { template_id: 'TEMPLATE', template_version: '1' }],
  ])('refuses template_version %s with INVALID_PDF_OPTIONS', async (_, fields) => {
    const owner = await newAccount(local);
    const t = await saveTemplate(local, owner.session, {});
    const body: Json = { ...fields, variables: { who: 'x' } };
    if (body.template_id === 'TEMPLATE') body.template_id = t.id;
    const res = await local.api('/v1/pdf', { method: 'POST', token: owner.session, body });
    expectError(res, 422, 'INVALID_PDF_OPTIONS');
    expect(res.json.error.details[0].field).toBe('template_version');
  });

  it('answers 404 PDF_TEMPLATE_NOT_FOUND for a version that does not exist', async () => {
    const owner = await newAccount(local);
    const t = await saveTemplate(local, owner.session, {});
    const res = await local.api('/v1/pdf', {
      method: 'POST',
      token: owner.session,
      body: { template_id: t.id, template_version: 2, variables: { who: 'x' } },
    });
    expectError(res, 404, 'PDF_TEMPLATE_NOT_FOUND');
  });
});

// ---------------------------------------------------------------------------------------------
// Who may do what: the table.

type Who = 'owner session' | 'other session' | 'owner key' | 'other key';
type Visibility = 'private' | 'public';
/** [status, code] (no code: success). */
type Cell = readonly [number, string?];

interface Cast {
  readonly owner: TestAccount;
  readonly other: TestAccount;
}

const tokenOf = (cast: Cast, who: Who): string =>
  ({
    'owner session': cast.owner.session,
    'other session': cast.other.session,
    'owner key': cast.owner.key,
    'other key': cast.other.key,
  })[who];

const OK = (status: number): Cell => [status];
const SESSION_REQUIRED: Cell = [403, 'SESSION_REQUIRED'];
const NOT_FOUND: Cell = [404, 'PDF_TEMPLATE_NOT_FOUND'];

/** Owner-only changes: keys are refused before anything is looked up; another session finds nothing. */
const ownerOnly = (status: number): Record<Visibility, Record<Who, Cell>> => {
  const row = {
    'owner session': OK(status),
    'other session': NOT_FOUND,
    'owner key': SESSION_REQUIRED,
    'other key': SESSION_REQUIRED,
  };
  return { private: row, public: row };
};

interface Operation {
  readonly name: string;
  readonly call: (cast: Cast, who: Who, template: Json) => Promise<ApiResponse>;
  readonly expected: Record<Visibility, Record<Who, Cell>>;
  /** What a successful answer must show, beyond its status. */
  readonly check?: (res: ApiResponse, template: Json, who: Who) => void;
}

const listed = (res: ApiResponse, template: Json) => res.json.some((t: Json) => t.id === template.id);

const OPERATIONS: readonly Operation[] = [
  {
    name: 'POST /v1/templates',
    call: (cast, who) =>
      local.api('/v1/templates', {
        method: 'POST',
        token: tokenOf(cast, who),
        body: { name: 'n', html: '<p>n</p>' },
      }),
    expected: (() => {
      const row = {
        'owner session': OK(201),
        'other session': OK(201),
        'owner key': SESSION_REQUIRED,
        'other key': SESSION_REQUIRED,
      };
      return { private: row, public: row };
    })(),
  },
  {
    name: 'GET /v1/templates',
    call: (cast, who) => local.api('/v1/templates?limit=100', { token: tokenOf(cast, who) }),
    expected: (() => {
      const row = {
        'owner session': OK(200),
        'other session': OK(200),
        'owner key': SESSION_REQUIRED,
        'other key': SESSION_REQUIRED,
      };
      return { private: row, public: row };
    })(),
    // Only the owner lists it, public or not.
    check: (res, template, who) => expect(listed(res, template)).toBe(who === 'owner session'),
  },
  {
    name: 'GET /v1/templates/public',
    call: (cast, who) => local.api('/v1/templates/public?limit=100', { token: tokenOf(cast, who) }),
    expected: (() => {
      const row = {
        'owner session': OK(200),
        'other session': OK(200),
        'owner key': OK(200),
        'other key': OK(200),
      };
      return { private: row, public: row };
    })(),
    check: (res, template) => expect(listed(res, template)).toBe(template.is_public),
  },
  {
    name: 'GET /v1/templates/{id}',
    call: (cast, who, t) => local.api(`/v1/templates/${t.id}`, { token: tokenOf(cast, who) }),
    expected: {
      private: {
        'owner session': OK(200),
        'other session': NOT_FOUND,
        'owner key': OK(200),
        'other key': NOT_FOUND,
      },
      public: {
        'owner session': OK(200),
        'other session': OK(200),
        'owner key': OK(200),
        'other key': OK(200),
      },
    },
    check: (res, template) => expect(res.json).toEqual(template),
  },
  {
    name: 'POST /v1/pdf with template_id',
    call: (cast, who, t) =>
      local.api('/v1/pdf', {
        method: 'POST',
        token: tokenOf(cast, who),
        // Another account's template is rendered at a named version (issue 21).
        body: { template_id: t.id, template_version: t.version, variables: { who: 'matrix' } },
      }),
    expected: {
      private: {
        'owner session': OK(201),
        'other session': NOT_FOUND,
        'owner key': OK(201),
        'other key': NOT_FOUND,
      },
      public: {
        'owner session': OK(201),
        'other session': OK(201),
        'owner key': OK(201),
        'other key': OK(201),
      },
    },
    check: (res, template) =>
      expect(res.json).toMatchObject({ status: 'completed', template_id: template.id, template_version: 1 }),
  },
  {
    name: 'PATCH /v1/templates/{id}',
    call: (cast, who, t) =>
      local.api(`/v1/templates/${t.id}`, {
        method: 'PATCH',
        token: tokenOf(cast, who),
        body: { name: 'changed' },
      }),
    expected: ownerOnly(200),
    check: (res) => expect(res.json.name).toBe('changed'),
  },
  {
    name: 'PATCH /v1/templates/{id}/visibility',
    call: (cast, who, t) =>
      local.api(`/v1/templates/${t.id}/visibility`, {
        method: 'PATCH',
        token: tokenOf(cast, who),
        body: { is_public: !t.is_public },
      }),
    expected: ownerOnly(200),
    check: (res, template) => expect(res.json.is_public).toBe(!template.is_public),
  },
  {
    name: 'DELETE /v1/templates/{id}',
    call: (cast, who, t) =>
      local.api(`/v1/templates/${t.id}`, { method: 'DELETE', token: tokenOf(cast, who) }),
    expected: ownerOnly(204),
    check: (res) => expect(res.text).toBe(''),
  },
];

const WHO: readonly Who[] = ['owner session', 'other session', 'owner key', 'other key'];
const CELLS = OPERATIONS.flatMap((operation) =>
  (['private', 'public'] as const).flatMap((visibility) =>
    WHO.map((who) => ({ operation, visibility, who, expected: operation.expected[visibility][who] })),
  ),
);

describe('who may do what', () => {
  it.each(CELLS)(
    '$operation.name on a $visibility template, as $who → $expected',
    async ({ operation, visibility, who, expected }) => {
      // A fresh pair of accounts and template per cell: no cell sees another's changes.
      const cast = { owner: await newAccount(local, 'owner'), other: await newAccount(local, 'other') };
      const template = await saveTemplate(local, cast.owner.session, { is_public: visibility === 'public' });
      const res = await operation.call(cast, who, template);
      const [status, code] = expected;
      if (code) {
        expectError(res, status, code);
      } else {
        expect(res.status, res.text).toBe(status);
        operation.check?.(res, template, who);
      }
      // Whatever the answer, a refused change changed nothing.
      if (code)
        expect((await local.api(`/v1/templates/${template.id}`, { token: cast.owner.session })).json).toEqual(
          template,
        );
    },
  );

  it("done when: account A's key renders a PDF from account B's public template, and cannot create one", async () => {
    const a = await newAccount(local, 'a');
    const b = await newAccount(local, 'b');
    const shared = await saveTemplate(local, b.session, {
      html: '<p>Shared by B for {{ who }}</p>',
      is_public: true,
    });
    const rendered = await local.api('/v1/pdf', {
      method: 'POST',
      token: a.key,
      body: { template_id: shared.id, template_version: shared.version, variables: { who: 'A' } },
    });
    expect(rendered.status, rendered.text).toBe(201);
    expect(rendered.json).toMatchObject({ status: 'completed', template_id: shared.id, template_version: 1 });
    // The job is A's: B does not see it.
    expectError(
      await local.api(`/v1/pdf/${rendered.json.id}`, { token: b.session }),
      404,
      'PDF_JOB_NOT_FOUND',
    );
    const create = await local.api('/v1/templates', {
      method: 'POST',
      token: a.key,
      body: { name: 'by key', html: '<p>no</p>' },
    });
    expectError(create, 403, 'SESSION_REQUIRED');
    expect(create.text).not.toContain(a.key);
  });
});
