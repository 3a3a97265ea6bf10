/**
 * Saved templates: the data layer. Items (functions/adapters/dynamodb/keys.ts):
 *
 *   record    TEMPLATE#<id> / TEMPLATE        name, owner, visibility, the current version, the
 *                                             version counter; on GSI1 (owner) and, while public, GSI2
 *   version   TEMPLATE#<id> / VERSION#<v>     immutable: chunk 0 of the content and the chunk count
 *   chunk     TEMPLATE#<id> / VERSION#<v>#<n> immutable: chunks 1..n-1
 *
 * Content (html, header and footer, and their variables: template-content.ts) is gzipped and cut
 * into chunks, so 1 MiB of html fits the table's 400 KB items. Nothing points to a version before all of it is written:
 * its chunks, then its header (the item that says how many chunks there are), then the record.
 * DynamoDB has no multi-item transaction in dynalite, and none is needed: a reader who finds a
 * version's header finds all its chunks, and a version becomes the current one only once written.
 *
 * Edits of the content never overwrite: each takes a new version number from an atomic counter on
 * the record (ADD), writes the version, and then moves the record forward only if no later version got
 * there first (a conditional update). Two concurrent edits both land, as two versions.
 */
import {
  BatchWriteCommand,
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { isoNow } from '../../domain/common/clock.js';
import { ServiceError } from '../../domain/common/errors.js';
import type { Page } from '../../domain/common/pagination.js';
import type { Clock } from '../../domain/common/ports.js';
import {
  ANSWER_BUDGET_BYTES,
  arrayPayloadBytes,
  CHUNK_BYTES,
  contentPayloadBytes,
  decodeContent,
  encodeContent,
  NO_CONTENT,
  RECORD_OVERHEAD_BYTES,
  recordPayloadBytes,
  type TemplateContent,
} from '../../domain/templates/template-content.js';
import { type Template, type TemplateStore, templateNotFound } from '../../domain/templates/templates.js';
import {
  ENTITY,
  GSI1,
  GSI2,
  ITEM_ABSENT,
  ITEM_EXISTS,
  ownedTemplateIndexKey,
  ownedTemplatesPartition,
  PK,
  PUBLIC_TEMPLATES_PARTITION,
  publicTemplateIndexKey,
  SK,
  TEMPLATE_INDEX_SK_PREFIX,
  TEMPLATE_VERSION_SK_PREFIX,
  templateChunkKey,
  templateKey,
  templateVersionPartition,
  templateVersionSk,
} from './keys.js';
import { queryAll, skipItems } from './pagination.js';

/** The record item as stored, without its content. */
interface TemplateRecord extends Omit<Template, keyof TemplateContent | 'renders_offline_for_others'> {
  /** What the current version's content weighs in an answer (template-content.ts). */
  readonly content_bytes: number;
}

export interface TemplateStoreOptions {
  /** What one answer may weigh in the Lambda response. @default ANSWER_BUDGET_BYTES (5 MiB) */
  readonly answerBudgetBytes?: number;
  /** @default CHUNK_BYTES (256 KiB) */
  readonly chunkBytes?: number;
  /** Told about clean-up that failed (the data it leaves is unreachable, not wrong). */
  readonly onFault?: (message: string, error: unknown) => void;
}

const isConditionFailure = (e: unknown) => (e as Error).name === 'ConditionalCheckFailedException';

const toRecord = (item: Record<string, unknown>): TemplateRecord => ({
  id: item.id as string,
  owner_user_id: item.owner_user_id as string,
  name: item.name as string,
  is_public: item.is_public as boolean,
  // A template made public before versions were published from then on: all of them are.
  public_since_version: item.is_public ? ((item.public_since_version as number | undefined) ?? 1) : null,
  created_at: item.created_at as string,
  updated_at: item.updated_at as string,
  version: item.version as number,
  content_bytes: item.content_bytes as number,
});

const withContent = (
  record: TemplateRecord,
  content: TemplateContent,
  version = record.version,
): Template => ({
  id: record.id,
  owner_user_id: record.owner_user_id,
  name: record.name,
  html: content.html,
  header_html: content.header_html ?? null,
  footer_html: content.footer_html ?? null,
  sample_variables: content.sample_variables ?? null,
  pdf_options: content.pdf_options ?? null,
  is_public: record.is_public,
  public_since_version: record.public_since_version,
  renders_offline_for_others: true,
  created_at: record.created_at,
  updated_at: record.updated_at,
  variables: content.variables,
  version,
});

/** What a record will weigh in an answer, known before its content is read. */
const answerBytes = (record: TemplateRecord): number =>
  recordPayloadBytes(withContent(record, NO_CONTENT), record.content_bytes);

/** Runs `task` over `items`, at most `width` at a time, keeping their order. */
const mapLimited = async <T, R>(items: readonly T[], width: number, task: (item: T) => Promise<R>) => {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await task(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
  return results;
};

export const createTemplateStore = (
  db: DynamoDBDocumentClient,
  tableName: string,
  clock: Clock,
  options: TemplateStoreOptions = {},
): TemplateStore => {
  const budget = options.answerBudgetBytes ?? ANSWER_BUDGET_BYTES;
  const chunkBytes = options.chunkBytes ?? CHUNK_BYTES;
  const onFault = options.onFault ?? (() => {});
  const now = () => isoNow(clock.now());

  /** Chunks 1..n-1 first, the header (chunk 0 and the count) last: a header means a whole version. */
  const putVersion = async (templateId: string, version: number, content: TemplateContent): Promise<void> => {
    const chunks = await encodeContent(content, chunkBytes);
    await Promise.all(
      chunks.slice(1).map((data, i) =>
        db.send(
          new PutCommand({
            TableName: tableName,
            Item: { ...templateChunkKey(templateId, version, i + 1), type: ENTITY.templateChunk, data },
            ConditionExpression: ITEM_ABSENT,
          }),
        ),
      ),
    );
    await db.send(
      new PutCommand({
        TableName: tableName,
        Item: {
          ...templateChunkKey(templateId, version, 0),
          type: ENTITY.templateVersion,
          template_id: templateId,
          version,
          chunk_count: chunks.length,
          created_at: now(),
          data: chunks[0],
        },
        ConditionExpression: ITEM_ABSENT,
      }),
    );
  };

  /**
   * A version written whole, or not at all: when a write fails, what did go in is removed (best
   * effort; unreachable either way, as no header or record points to it).
   */
  const writeVersion = async (templateId: string, version: number, content: TemplateContent) => {
    try {
      await putVersion(templateId, version, content);
    } catch (e) {
      await dropVersions(templateId, templateVersionSk(version));
      throw e;
    }
  };

  /** Every item of one version (header first), or of all versions: their keys and data. */
  const queryVersionItems = (templateId: string, prefix: string, keysOnly: boolean) =>
    queryAll(db, {
      TableName: tableName,
      KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
      ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
      ExpressionAttributeValues: { ':pk': templateVersionPartition(templateId), ':prefix': prefix },
      ConsistentRead: true,
      ...(keysOnly ? { ProjectionExpression: '#pk, #sk' } : {}),
    });

  /** A version's content, or undefined when it was never (completely) written or is deleted. */
  const readVersion = async (templateId: string, version: number): Promise<TemplateContent | undefined> => {
    const items = await queryVersionItems(templateId, templateVersionSk(version), false);
    const [header] = items;
    if (header?.[SK] !== templateVersionSk(version) || header.chunk_count !== items.length) return undefined;
    return decodeContent(items.map((item) => item.data as Uint8Array));
  };

  const deleteItems = async (keys: readonly Record<string, unknown>[]): Promise<void> => {
    for (let at = 0; at < keys.length; at += 25) {
      let requests = keys
        .slice(at, at + 25)
        .map((k) => ({ DeleteRequest: { Key: { [PK]: k[PK], [SK]: k[SK] } } }));
      for (let attempt = 0; requests.length > 0; attempt++) {
        if (attempt === 5) throw new Error('DynamoDB left deletes unprocessed five times');
        const out = await db.send(new BatchWriteCommand({ RequestItems: { [tableName]: requests } }));
        requests = (out.UnprocessedItems?.[tableName] ?? []) as typeof requests;
        if (requests.length > 0) await new Promise((r) => setTimeout(r, 50 * 2 ** attempt));
      }
    }
  };

  /** Removes versions nothing points to any more; a failure leaves them unreachable, so it is only reported. */
  const dropVersions = (templateId: string, prefix: string) =>
    queryVersionItems(templateId, prefix, true)
      .then(deleteItems)
      .catch((e) => onFault('deleting template versions failed', e));

  const getRecord = async (templateId: string): Promise<TemplateRecord | undefined> => {
    const out = await db.send(
      new GetCommand({ TableName: tableName, Key: templateKey(templateId), ConsistentRead: true }),
    );
    return out.Item?.type === ENTITY.template ? toRecord(out.Item) : undefined;
  };

  /** The record with its current content; a version deleted meanwhile means the template is gone. */
  const complete = async (record: TemplateRecord): Promise<Template> => {
    const content = await readVersion(record.id, record.version);
    if (!content) throw templateNotFound(record.id);
    return withContent(record, content);
  };

  /** An update of the owner's record (answers 404 for anyone else, and for a missing one). */
  const updateOwned = async (
    templateId: string,
    ownerId: string,
    update: { expression: string; names?: Record<string, string>; values?: Record<string, unknown> },
  ): Promise<TemplateRecord> => {
    try {
      const out = await db.send(
        new UpdateCommand({
          TableName: tableName,
          Key: templateKey(templateId),
          UpdateExpression: update.expression,
          ConditionExpression: '#owner = :owner',
          ExpressionAttributeNames: { '#owner': 'owner_user_id', ...update.names },
          ExpressionAttributeValues: { ':owner': ownerId, ...update.values },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return toRecord(out.Attributes ?? {});
    } catch (e) {
      if (isConditionFailure(e)) throw templateNotFound(templateId);
      throw e;
    }
  };

  const renameRecord = (templateId: string, ownerId: string, name: string) =>
    updateOwned(templateId, ownerId, {
      expression: 'SET #name = :name, updated_at = :now',
      names: { '#name': 'name' },
      values: { ':name': name, ':now': now() },
    });

  /** Where a page at `count` starts: the index entries before it are read as keys only. */
  const skip = (query: QueryInput, count: number) =>
    skipItems(
      db,
      {
        ...query,
        ProjectionExpression: '#pk, #sk, #ipk, #isk',
        ExpressionAttributeNames: { ...query.ExpressionAttributeNames, '#pk': PK, '#sk': SK },
      },
      count,
    );

  type QueryInput = {
    TableName: string;
    IndexName: string;
    KeyConditionExpression: string;
    ExpressionAttributeNames: Record<string, string>;
    ExpressionAttributeValues: Record<string, unknown>;
    ScanIndexForward: boolean;
  };

  const newestFirst = (index: typeof GSI1 | typeof GSI2, partition: string): QueryInput => ({
    TableName: tableName,
    IndexName: index.indexName,
    KeyConditionExpression: '#ipk = :ipk AND begins_with(#isk, :prefix)',
    ExpressionAttributeNames: { '#ipk': index.partitionKey, '#isk': index.sortKey },
    ExpressionAttributeValues: { ':ipk': partition, ':prefix': TEMPLATE_INDEX_SK_PREFIX },
    ScanIndexForward: false,
  });

  /**
   * A page of an index, newest first: `limit` records after `offset`, cut short where the next
   * one would take the answer past the budget (the first always fits: content is refused at save
   * when it could not). Only the records that fit have their content read.
   */
  const listPage = async (query: QueryInput, { limit, offset }: Page): Promise<Template[]> => {
    const { startKey, exhausted } =
      offset > 0 ? await skip(query, offset) : { startKey: undefined, exhausted: false };
    if (exhausted) return [];
    const records: TemplateRecord[] = [];
    let next = startKey;
    do {
      const out = await db.send(
        new QueryCommand({ ...query, Limit: limit - records.length, ExclusiveStartKey: next }),
      );
      records.push(...(out.Items ?? []).map(toRecord));
      next = out.LastEvaluatedKey;
    } while (next && records.length < limit);

    const sizes: number[] = [];
    for (const record of records) {
      const size = answerBytes(record);
      if (sizes.length > 0 && arrayPayloadBytes([...sizes, size]) > budget) break;
      sizes.push(size);
    }
    const page = await mapLimited(records.slice(0, sizes.length), 8, async (record) => {
      const content = await readVersion(record.id, record.version);
      // Deleted since the index was read (indexes are eventually consistent): not listed.
      return content ? withContent(record, content) : undefined;
    });
    return page.filter((t): t is Template => t !== undefined);
  };

  return {
    /** The content's weight in an answer; content heavier than this cannot be saved. */
    maxContentBytes: budget - arrayPayloadBytes([]) - RECORD_OVERHEAD_BYTES,

    /** Version 1 first, then the record that points to it. */
    async create(
      template: Pick<Template, 'id' | 'owner_user_id' | 'name' | 'is_public'>,
      content: TemplateContent,
    ): Promise<Template> {
      await writeVersion(template.id, 1, content);
      const at = now();
      const record: TemplateRecord = {
        ...template,
        public_since_version: template.is_public ? 1 : null,
        created_at: at,
        updated_at: at,
        version: 1,
        content_bytes: contentPayloadBytes(content),
      };
      await db.send(
        new PutCommand({
          TableName: tableName,
          Item: {
            ...templateKey(template.id),
            type: ENTITY.template,
            ...record,
            // Absent while private: publishing sets it (if_not_exists).
            public_since_version: undefined,
            version_counter: 1,
            ...ownedTemplateIndexKey(template.owner_user_id, template.id),
            ...(template.is_public
              ? { ...publicTemplateIndexKey(template.id), public_since_version: 1 }
              : {}),
          },
          ConditionExpression: ITEM_ABSENT,
        }),
      );
      return withContent(record, content);
    },

    /**
     * The template at `version` (default: the current one) if the caller owns it or it is public;
     * another account's private template does not exist. Read consistently: a template made
     * private is refused on the very next request.
     */
    async getReadable(templateId: string, accountId: string, version?: number): Promise<Template> {
      // A named version is read beside the record (one round trip, not two); kept only if the
      // record allows it, and read again if it looked unfinished (written as the record was read).
      const named =
        version === undefined ? undefined : readVersion(templateId, version).catch(() => undefined);
      const record = await getRecord(templateId);
      const owner = record?.owner_user_id === accountId;
      if (!record || (!owner && !record.is_public)) {
        throw templateNotFound(templateId);
      }
      const wanted = version ?? record.version;
      // Versions from before it was made public are still its owner's alone.
      if (!owner && wanted < (record.public_since_version ?? Number.POSITIVE_INFINITY)) {
        throw new ServiceError('PDF_TEMPLATE_NOT_FOUND', `Template ${templateId} has no version ${version}`);
      }
      // Versions past the current one are edits still being written.
      const content =
        wanted <= record.version ? ((await named) ?? (await readVersion(templateId, wanted))) : undefined;
      if (!content) {
        throw version === undefined
          ? templateNotFound(templateId)
          : new ServiceError('PDF_TEMPLATE_NOT_FOUND', `Template ${templateId} has no version ${version}`);
      }
      return withContent(record, content, wanted);
    },

    async rename(templateId: string, ownerId: string, name: string): Promise<Template> {
      return complete(await renameRecord(templateId, ownerId, name));
    },

    /** Public templates carry GSI2's attributes; a private one has none, so it leaves the public list. */
    async setVisibility(templateId: string, ownerId: string, isPublic: boolean): Promise<Template> {
      const index = publicTemplateIndexKey(templateId);
      return complete(
        await updateOwned(
          templateId,
          ownerId,
          isPublic
            ? {
                // Published from its current version on; made public again, from the then current.
                expression:
                  'SET is_public = :public, updated_at = :now, #gpk = :gpk, #gsk = :gsk, public_since_version = if_not_exists(public_since_version, #version)',
                names: { '#gpk': GSI2.partitionKey, '#gsk': GSI2.sortKey, '#version': 'version' },
                values: {
                  ':public': true,
                  ':now': now(),
                  ':gpk': index[GSI2.partitionKey],
                  ':gsk': index[GSI2.sortKey],
                },
              }
            : {
                expression:
                  'SET is_public = :public, updated_at = :now REMOVE #gpk, #gsk, public_since_version',
                names: { '#gpk': GSI2.partitionKey, '#gsk': GSI2.sortKey },
                values: { ':public': false, ':now': now() },
              },
        ),
      );
    },

    /**
     * New content (and perhaps a new name) as a new version. Answers the template as this edit made
     * it: when a concurrent edit took a later version first, this one stays in the history (and
     * renderable by its number) and the answer says which version it became.
     */
    async revise(
      templateId: string,
      ownerId: string,
      content: TemplateContent,
      name?: string,
    ): Promise<Template> {
      // 1. A version number of its own, whatever else runs: an atomic counter on the record.
      let version: number;
      try {
        const out = await db.send(
          new UpdateCommand({
            TableName: tableName,
            Key: templateKey(templateId),
            UpdateExpression: 'ADD version_counter :one',
            ConditionExpression: '#owner = :owner',
            ExpressionAttributeNames: { '#owner': 'owner_user_id' },
            ExpressionAttributeValues: { ':owner': ownerId, ':one': 1 },
            ReturnValues: 'UPDATED_NEW',
          }),
        );
        version = out.Attributes?.version_counter as number;
      } catch (e) {
        if (isConditionFailure(e)) throw templateNotFound(templateId);
        throw e;
      }
      // 2. The version, whole, before anything points to it.
      await writeVersion(templateId, version, content);
      // 3. The record moves forward, unless a later version got there first.
      const names: Record<string, string> = { '#version': 'version' };
      const values: Record<string, unknown> = {
        ':version': version,
        ':bytes': contentPayloadBytes(content),
        ':now': now(),
      };
      let sets = '#version = :version, content_bytes = :bytes, updated_at = :now';
      if (name !== undefined) {
        names['#name'] = 'name';
        values[':name'] = name;
        sets += ', #name = :name';
      }
      try {
        const out = await db.send(
          new UpdateCommand({
            TableName: tableName,
            Key: templateKey(templateId),
            UpdateExpression: `SET ${sets}`,
            ConditionExpression: `${ITEM_EXISTS} AND #version < :version`,
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: values,
            ReturnValues: 'ALL_NEW',
          }),
        );
        return withContent(toRecord(out.Attributes ?? {}), content);
      } catch (e) {
        if (!isConditionFailure(e)) throw e;
      }
      const current = await getRecord(templateId);
      if (!current) {
        // Deleted while this edit was written: its version is unreachable, so it goes too.
        await dropVersions(templateId, templateVersionSk(version));
        throw templateNotFound(templateId);
      }
      const record = name === undefined ? current : await renameRecord(templateId, ownerId, name);
      return withContent(record, content, version);
    },

    async remove(templateId: string, ownerId: string): Promise<void> {
      try {
        await db.send(
          new DeleteCommand({
            TableName: tableName,
            Key: templateKey(templateId),
            ConditionExpression: '#owner = :owner',
            ExpressionAttributeNames: { '#owner': 'owner_user_id' },
            ExpressionAttributeValues: { ':owner': ownerId },
          }),
        );
      } catch (e) {
        if (isConditionFailure(e)) throw templateNotFound(templateId);
        throw e;
      }
      // The record is gone, so nothing reaches its versions any more: removing them can fail safely.
      await dropVersions(templateId, TEMPLATE_VERSION_SK_PREFIX);
    },

    listOwned: (accountId: string, page: Page): Promise<Template[]> =>
      listPage(newestFirst(GSI1, ownedTemplatesPartition(accountId)), page),

    listPublic: (page: Page): Promise<Template[]> =>
      listPage(newestFirst(GSI2, PUBLIC_TEMPLATES_PARTITION), page),

    /** A version's content as stored, or undefined (for tests and tools). */
    readVersion,
  };
};
