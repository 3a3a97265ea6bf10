/** Saved templates: the lookup rendering needs (the caller's own, or a public one). */
import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { ServiceError } from './errors.js';
import { ENTITY, templateKey } from './keys.js';

export interface Template {
  readonly id: string;
  readonly owner_user_id: string;
  readonly name: string;
  readonly html: string;
  readonly is_public: boolean;
  readonly created_at: string;
  readonly updated_at: string;
}

export const templateNotFound = (templateId: string) =>
  new ServiceError('PDF_TEMPLATE_NOT_FOUND', `Template ${templateId} was not found`);

export const createTemplateStore = (db: DynamoDBDocumentClient, tableName: string) => ({
  /** The template if the caller owns it or it is public; another account's private one does not exist. */
  async getReadable(templateId: string, accountId: string): Promise<Template> {
    const out = await db.send(new GetCommand({ TableName: tableName, Key: templateKey(templateId) }));
    const item = out.Item as (Template & { type?: string }) | undefined;
    if (item?.type !== ENTITY.template || (item.owner_user_id !== accountId && !item.is_public)) {
      throw templateNotFound(templateId);
    }
    return item;
  },
});

export type TemplateStore = ReturnType<typeof createTemplateStore>;
