/**
 * The saved-template data layer against a real DynamoDB API (dynalite), without Chromium or HTTP:
 * content in chunks written before anything points to them, versions from an atomic counter
 * (concurrent edits all land), visibility on the public index, pages cut by the answer budget,
 * and deletion of every item. Faults are injected into the client to prove that a half-written
 * version is never seen.
 */
import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { templateKey } from '../../functions/adapters/dynamodb/keys.js';
import {
  createTemplateStore,
  type TemplateStoreOptions,
} from '../../functions/adapters/dynamodb/templates.js';
import { newTemplateId } from '../../functions/domain/common/ids.js';
import {
  arrayPayloadBytes,
  decodeContent,
  encodeContent,
  payloadBytes,
} from '../../functions/domain/templates/template-content.js';
import { testClock, useTable } from '../helpers/dynalite.js';
import { rejection } from '../helpers/rejection.js';

const table = useTable('template-store-test');
const clock = testClock('2026-11-25T10:00:00.000Z');
let accounts = 0;
const newAccount = () => `tpl-acct-${++accounts}`;

/** Small chunks, so that small contents already span several items. */
const store = (options: TemplateStoreOptions = {}, db: DynamoDBDocumentClient = table.db) =>
  createTemplateStore(db, table.name, clock, { chunkBytes: 64, ...options });

const content = (html: string, variables: string[] = []) => ({ html, variables });

/** Text that gzip cannot shrink much: each character drawn from a mix of 1- to 4-byte ones. */
const noisy = (chars: number, seed = 7): string => {
  const alphabet = [...'abcdefghijklmnopqrstuvwxyzé€漢字🙂<>"&\n'];
  let x = seed;
  let s = '';
  for (let i = 0; i < chars; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    s += alphabet[x % alphabet.length];
  }
  return s;
};

const itemsOf = async (templateId: string) =>
  (
    await table.db.send(
      new QueryCommand({
        TableName: table.name,
        KeyConditionExpression: 'PK = :pk',
        ExpressionAttributeValues: { ':pk': `TEMPLATE#${templateId}` },
        ConsistentRead: true,
      }),
    )
  ).Items ?? [];

/** A client that runs `hook` before each command it sends (a fault, or a pause to interleave). */
const intercepted = (hook: (command: { input: Record<string, unknown> }) => Promise<void> | void) =>
  ({
    send: async (command: { input: Record<string, unknown> }) => {
      await hook(command);
      return table.db.send(command as never);
    },
  }) as unknown as DynamoDBDocumentClient;

describe('template content', () => {
  it('round-trips through gzip chunks, and a missing chunk is an error, not wrong html', async () => {
    const original = content(noisy(5000), ['a', 'b']);
    const chunks = await encodeContent(original, 512);
    expect(chunks.length).toBeGreaterThan(5);
    expect(chunks.every((c) => c.length <= 512)).toBe(true);
    expect(await decodeContent(chunks)).toEqual(original);
    await expect(decodeContent([...chunks.slice(0, 2), ...chunks.slice(3)])).rejects.toThrow();
  });

  it('weighs values as a Lambda proxy result carries them: escaped twice', () => {
    expect(payloadBytes('ab')).toBe(6); // "ab" → "\"ab\""
    expect(payloadBytes('\u0001')).toBe(11); // "\u0001" → "\"\\u0001\""
    expect(payloadBytes('é')).toBe(6);
    const items = [{ a: 1 }, { b: 'x"y' }];
    expect(arrayPayloadBytes(items.map(payloadBytes))).toBe(payloadBytes(items));
  });
});

describe('template store', () => {
  it('stores content in chunks and reads it back, with variables and version 1', async () => {
    const id = newTemplateId();
    const owner = newAccount();
    const html = noisy(3000);
    const created = await store().create(
      { id, owner_user_id: owner, name: 'Noisy', is_public: false },
      content(html, ['x']),
    );
    expect(created).toMatchObject({ id, version: 1, html, variables: ['x'], is_public: false });
    const items = await itemsOf(id);
    const chunks = items.filter((i) => i.type === 'template_chunk');
    expect(chunks.length).toBeGreaterThan(10);
    expect(items.find((i) => i.type === 'template_version')?.chunk_count).toBe(chunks.length + 1);
    // No html in the record: it is the version items' alone.
    expect(JSON.stringify(items.find((i) => i.type === 'template'))).not.toContain(html.slice(0, 50));

    expect(await store().getReadable(id, owner)).toEqual(created);
    const stranger = await rejection(store().getReadable(id, newAccount()));
    expect(stranger.code).toBe('PDF_TEMPLATE_NOT_FOUND');
  });

  it('a version whose header never got written does not exist, and the record stays where it was', async () => {
    const id = newTemplateId();
    const owner = newAccount();
    await store().create({ id, owner_user_id: owner, name: 'T', is_public: false }, content('<p>one</p>'));
    // The header is the version's last write: fail it, after its chunks went in.
    let chunkWrites = 0;
    const failing = store(
      {},
      intercepted((command) => {
        const item = command.input.Item as Record<string, unknown> | undefined;
        if (item?.type === 'template_chunk') chunkWrites++;
        if (item?.type === 'template_version') throw new Error('injected: the header write failed');
      }),
    );
    await expect(failing.revise(id, owner, content(noisy(2000)))).rejects.toThrow('injected');
    // Its chunks went in first, and were taken out again.
    expect(chunkWrites).toBeGreaterThan(5);
    expect((await itemsOf(id)).filter((i) => String(i.SK).startsWith('VERSION#0000000002'))).toEqual([]);
    expect(await store().readVersion(id, 2)).toBeUndefined();
    const current = await store().getReadable(id, owner);
    expect(current).toMatchObject({ version: 1, html: '<p>one</p>' });
    expect((await rejection(store().getReadable(id, owner, 2))).code).toBe('PDF_TEMPLATE_NOT_FOUND');
    // The number it took is skipped, not reused: the next edit is version 3.
    expect((await store().revise(id, owner, content('<p>three</p>'))).version).toBe(3);
  });

  it('concurrent edits of html all land, each as its own version; the record ends at the highest', async () => {
    const id = newTemplateId();
    const owner = newAccount();
    await store().create({ id, owner_user_id: owner, name: 'T', is_public: true }, content('<p>v1</p>'));
    const edits = Array.from({ length: 8 }, (_, i) => `<p>edit ${i} ${noisy(300, i)}</p>`);
    const answers = await Promise.all(edits.map((html) => store().revise(id, owner, content(html))));
    const versions = answers.map((a) => a.version).sort((a, b) => a - b);
    expect(versions).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
    for (const answer of answers) {
      // Each answer names the version its html became, and that version holds exactly that html.
      expect((await store().getReadable(id, owner, answer.version)).html).toBe(answer.html);
    }
    const latest = await store().getReadable(id, owner);
    expect(latest.version).toBe(9);
    expect(latest.html).toBe(answers.find((a) => a.version === 9)?.html);
  });

  it('an edit that loses the race to a later version keeps its name change and its version', async () => {
    const id = newTemplateId();
    const owner = newAccount();
    await store().create({ id, owner_user_id: owner, name: 'Old', is_public: false }, content('<p>1</p>'));
    // Edit A takes version 2, then waits until edit B (version 3) has moved the record.
    let release: () => void = () => {};
    const bDone = new Promise<void>((r) => {
      release = r;
    });
    let paused = false;
    const slow = store(
      {},
      intercepted(async (command) => {
        if (!paused && String(command.input.UpdateExpression ?? '').startsWith('SET #version')) {
          paused = true;
          await bDone;
        }
      }),
    );
    const a = slow.revise(id, owner, content('<p>A</p>'), 'Named by A');
    await new Promise((r) => setTimeout(r, 50));
    const b = await store().revise(id, owner, content('<p>B</p>'));
    release();
    const answerA = await a;
    expect(b.version).toBe(3);
    expect(answerA).toMatchObject({ version: 2, html: '<p>A</p>', name: 'Named by A' });
    expect(await store().getReadable(id, owner)).toMatchObject({
      version: 3,
      html: '<p>B</p>',
      name: 'Named by A',
    });
    expect((await store().getReadable(id, owner, 2)).html).toBe('<p>A</p>');
  });

  it('renames without a new version; only the owner changes anything', async () => {
    const id = newTemplateId();
    const owner = newAccount();
    await store().create({ id, owner_user_id: owner, name: 'A', is_public: true }, content('<p>x</p>'));
    clock.advance(1000);
    const renamed = await store().rename(id, owner, 'B');
    expect(renamed).toMatchObject({ name: 'B', version: 1, html: '<p>x</p>' });
    expect(renamed.updated_at > renamed.created_at).toBe(true);
    const other = newAccount();
    for (const attempt of [
      store().rename(id, other, 'C'),
      store().revise(id, other, content('<p>y</p>')),
      store().setVisibility(id, other, false),
      store().remove(id, other),
    ]) {
      expect((await rejection(attempt)).code).toBe('PDF_TEMPLATE_NOT_FOUND');
    }
    // Readable (it is public), and unchanged.
    expect(await store().getReadable(id, other)).toMatchObject({ name: 'B', version: 1, is_public: true });
  });

  it('lists by owner and the public ones from their indexes, newest first; private leaves the public list', async () => {
    const owner = newAccount();
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const id = newTemplateId();
      ids.push(id);
      await store().create(
        { id, owner_user_id: owner, name: `t${i}`, is_public: i % 2 === 0 },
        content(`<p>${i}</p>`),
      );
    }
    const own = await store().listOwned(owner, { limit: 10, offset: 0 });
    expect(own.map((t) => t.id)).toEqual([...ids].reverse());
    expect(own[0]?.html).toBe('<p>3</p>');
    expect((await store().listOwned(owner, { limit: 2, offset: 1 })).map((t) => t.id)).toEqual([
      ids[2],
      ids[1],
    ]);
    expect(await store().listOwned(owner, { limit: 2, offset: 4 })).toEqual([]);

    const publicIds = async () => (await store().listPublic({ limit: 100, offset: 0 })).map((t) => t.id);
    expect(await publicIds()).toEqual(expect.arrayContaining([ids[0], ids[2]]));
    expect(await publicIds()).not.toContain(ids[1]);
    await store().setVisibility(ids[0] as string, owner, false);
    expect(await publicIds()).not.toContain(ids[0]);
    await store().setVisibility(ids[1] as string, owner, true);
    expect(await publicIds()).toContain(ids[1]);
  });

  it('cuts a page where the next template would take the answer past the budget, reading no more content', async () => {
    const owner = newAccount();
    const html = noisy(2000);
    for (let i = 0; i < 5; i++) {
      await store().create(
        { id: newTemplateId(), owner_user_id: owner, name: `big ${i}`, is_public: false },
        content(html),
      );
    }
    const all = await store().listOwned(owner, { limit: 10, offset: 0 });
    const one = payloadBytes(all[0]);
    expect(payloadBytes(all)).toBe(arrayPayloadBytes(all.map(payloadBytes)));

    // Room for two and a half: two per page, and the pages join up by offset.
    let versionReads = 0;
    const counting = store(
      { answerBudgetBytes: Math.floor(2.5 * one) },
      intercepted((command) => {
        if (String(command.input.KeyConditionExpression ?? '').includes('begins_with(#sk')) versionReads++;
      }),
    );
    const first = await counting.listOwned(owner, { limit: 10, offset: 0 });
    expect(first.map((t) => t.id)).toEqual(all.slice(0, 2).map((t) => t.id));
    expect(payloadBytes(first)).toBeLessThanOrEqual(Math.floor(2.5 * one));
    expect(versionReads).toBe(2);
    const second = await counting.listOwned(owner, { limit: 10, offset: 2 });
    expect(second.map((t) => t.id)).toEqual(all.slice(2, 4).map((t) => t.id));

    // A budget smaller than one template still gives one: a saved template always fits alone.
    const tiny = await store({ answerBudgetBytes: 10 }).listOwned(owner, { limit: 10, offset: 0 });
    expect(tiny).toHaveLength(1);
  });

  it('deletes the record and every version item; jobs are not its to touch', async () => {
    const id = newTemplateId();
    const owner = newAccount();
    await store().create({ id, owner_user_id: owner, name: 'T', is_public: true }, content(noisy(1000)));
    await store().revise(id, owner, content(noisy(1000, 3)));
    expect((await itemsOf(id)).length).toBeGreaterThan(10);
    await store().remove(id, owner);
    expect(await itemsOf(id)).toEqual([]);
    expect((await rejection(store().getReadable(id, owner))).code).toBe('PDF_TEMPLATE_NOT_FOUND');
    expect((await rejection(store().remove(id, owner))).code).toBe('PDF_TEMPLATE_NOT_FOUND');
  });

  it('an edit that finds its template deleted meanwhile answers 404 and leaves nothing behind', async () => {
    const id = newTemplateId();
    const owner = newAccount();
    await store().create({ id, owner_user_id: owner, name: 'T', is_public: false }, content('<p>1</p>'));
    const deleting = store(
      {},
      intercepted(async (command) => {
        if (String(command.input.UpdateExpression ?? '').startsWith('SET #version')) {
          await store().remove(id, owner);
        }
      }),
    );
    expect((await rejection(deleting.revise(id, owner, content(noisy(500))))).code).toBe(
      'PDF_TEMPLATE_NOT_FOUND',
    );
    expect(await itemsOf(id)).toEqual([]);
  });

  it('keeps the version counter on the record, and version items immutable', async () => {
    const id = newTemplateId();
    const owner = newAccount();
    await store().create({ id, owner_user_id: owner, name: 'T', is_public: false }, content('<p>1</p>'));
    const record = await table.db.send(
      new GetCommand({ TableName: table.name, Key: templateKey(id), ConsistentRead: true }),
    );
    expect(record.Item).toMatchObject({ version: 1, version_counter: 1, GSI1PK: `ACCOUNT#${owner}` });
    expect(record.Item?.GSI2PK).toBeUndefined();
    // Writing a version that exists fails: nothing rewrites history.
    const header = (await itemsOf(id)).find((i) => i.type === 'template_version');
    await expect(
      table.db.send(
        new PutCommand({
          TableName: table.name,
          Item: header,
          ConditionExpression: 'attribute_not_exists(PK)',
        }),
      ),
    ).rejects.toMatchObject({ name: 'ConditionalCheckFailedException' });
    // A record pushed to a version nobody wrote does not make one up.
    await table.db.send(
      new UpdateCommand({
        TableName: table.name,
        Key: templateKey(id),
        UpdateExpression: 'SET version = :v',
        ExpressionAttributeValues: { ':v': 5 },
      }),
    );
    expect((await rejection(store().getReadable(id, owner))).code).toBe('PDF_TEMPLATE_NOT_FOUND');
  });
});
