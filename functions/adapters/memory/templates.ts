/**
 * The TemplateStore (domain/templates.ts) in memory, as the DynamoDB adapter
 * (adapters/dynamodb/templates.ts) behaves: versions are immutable and numbered by a counter, the
 * record points to the current one; only the owner edits; another account reads a template only
 * while it is public, and only its versions from the one that was current when it was made public;
 * listings go newest first and stop before the page would weigh more than the answer budget. The
 * template store contract (test/contract/templates.contract.ts) runs the same cases against both.
 */
import { isoNow } from '../../domain/common/clock.js';
import { ServiceError } from '../../domain/common/errors.js';
import type { Page } from '../../domain/common/pagination.js';
import type { Clock } from '../../domain/common/ports.js';
import {
  ANSWER_BUDGET_BYTES,
  arrayPayloadBytes,
  contentPayloadBytes,
  NO_CONTENT,
  RECORD_OVERHEAD_BYTES,
  recordPayloadBytes,
  type TemplateContent,
} from '../../domain/templates/template-content.js';
import { type Template, type TemplateStore, templateNotFound } from '../../domain/templates/templates.js';

export interface MemoryTemplateStoreOptions {
  /** What one answer may weigh. @default ANSWER_BUDGET_BYTES (5 MiB) */
  readonly answerBudgetBytes?: number;
}

interface Record_ {
  readonly id: string;
  readonly owner_user_id: string;
  name: string;
  is_public: boolean;
  public_since_version: number | null;
  readonly created_at: string;
  updated_at: string;
  version: number;
  versionCounter: number;
  contentBytes: number;
}

const conditionFailed = (): Error => {
  const error = new Error('The conditional request failed');
  error.name = 'ConditionalCheckFailedException';
  return error;
};

const withContent = (r: Record_, content: TemplateContent, version = r.version): Template => ({
  id: r.id,
  owner_user_id: r.owner_user_id,
  name: r.name,
  html: content.html,
  header_html: content.header_html ?? null,
  footer_html: content.footer_html ?? null,
  sample_variables: content.sample_variables ?? null,
  pdf_options: content.pdf_options ?? null,
  is_public: r.is_public,
  public_since_version: r.is_public ? r.public_since_version : null,
  renders_offline_for_others: true,
  created_at: r.created_at,
  updated_at: r.updated_at,
  version,
  variables: content.variables,
});

/** What a record weighs in an answer, known before its content is read. */
const answerBytes = (r: Record_): number => recordPayloadBytes(withContent(r, NO_CONTENT), r.contentBytes);

export const createMemoryTemplateStore = (
  clock: Clock,
  options: MemoryTemplateStoreOptions = {},
): TemplateStore => {
  const budget = options.answerBudgetBytes ?? ANSWER_BUDGET_BYTES;
  const records = new Map<string, Record_>();
  const versions = new Map<string, TemplateContent>();
  const versionKey = (id: string, version: number) => `${id}#${version}`;
  const now = () => isoNow(clock.now());

  const owned = (templateId: string, ownerId: string): Record_ => {
    const r = records.get(templateId);
    if (r?.owner_user_id !== ownerId) throw templateNotFound(templateId);
    return r;
  };
  const current = (r: Record_): Template => {
    const content = versions.get(versionKey(r.id, r.version));
    if (!content) throw templateNotFound(r.id);
    return withContent(r, structuredClone(content));
  };
  const noVersion = (templateId: string, version: number) =>
    new ServiceError('PDF_TEMPLATE_NOT_FOUND', `Template ${templateId} has no version ${version}`);

  const listPage = (found: Record_[], { limit, offset }: Page): Template[] => {
    const page = found.sort((a, b) => (a.id < b.id ? 1 : -1)).slice(offset, offset + limit);
    const sizes: number[] = [];
    for (const r of page) {
      const size = answerBytes(r);
      if (sizes.length > 0 && arrayPayloadBytes([...sizes, size]) > budget) break;
      sizes.push(size);
    }
    return page.slice(0, sizes.length).map(current);
  };

  return {
    maxContentBytes: budget - arrayPayloadBytes([]) - RECORD_OVERHEAD_BYTES,

    async create(template, content) {
      if (records.has(template.id)) throw conditionFailed();
      const at = now();
      const r: Record_ = {
        ...template,
        public_since_version: template.is_public ? 1 : null,
        created_at: at,
        updated_at: at,
        version: 1,
        versionCounter: 1,
        contentBytes: contentPayloadBytes(content),
      };
      versions.set(versionKey(template.id, 1), structuredClone(content));
      records.set(template.id, r);
      return withContent(r, structuredClone(content));
    },

    async getReadable(templateId, accountId, version) {
      const r = records.get(templateId);
      const owner = r?.owner_user_id === accountId;
      if (!r || (!owner && !r.is_public)) throw templateNotFound(templateId);
      const wanted = version ?? r.version;
      if (!owner && wanted < (r.public_since_version ?? Number.POSITIVE_INFINITY)) {
        throw noVersion(templateId, wanted);
      }
      const content = wanted <= r.version ? versions.get(versionKey(templateId, wanted)) : undefined;
      if (!content)
        throw version === undefined ? templateNotFound(templateId) : noVersion(templateId, wanted);
      return withContent(r, structuredClone(content), wanted);
    },

    async rename(templateId, ownerId, name) {
      const r = owned(templateId, ownerId);
      r.name = name;
      r.updated_at = now();
      return current(r);
    },

    async setVisibility(templateId, ownerId, isPublic) {
      const r = owned(templateId, ownerId);
      r.is_public = isPublic;
      r.public_since_version = isPublic ? (r.public_since_version ?? r.version) : null;
      r.updated_at = now();
      return current(r);
    },

    async revise(templateId, ownerId, content, name) {
      const r = owned(templateId, ownerId);
      const version = ++r.versionCounter;
      versions.set(versionKey(templateId, version), structuredClone(content));
      if (r.version < version) {
        r.version = version;
        r.contentBytes = contentPayloadBytes(content);
      }
      if (name !== undefined) r.name = name;
      r.updated_at = now();
      return withContent(r, structuredClone(content), version);
    },

    async remove(templateId, ownerId) {
      const r = owned(templateId, ownerId);
      records.delete(templateId);
      for (let v = 1; v <= r.versionCounter; v++) versions.delete(versionKey(templateId, v));
    },

    listOwned: async (accountId, page) =>
      listPage(
        [...records.values()].filter((r) => r.owner_user_id === accountId),
        page,
      ),

    listPublic: async (page) =>
      listPage(
        [...records.values()].filter((r) => r.is_public),
        page,
      ),

    async readVersion(templateId, version) {
      const content = versions.get(versionKey(templateId, version));
      return content ? structuredClone(content) : undefined;
    },
  };
};
