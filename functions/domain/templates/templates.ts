/**
 * Saved templates as the domain sees them; the store is a port, and the DynamoDB adapter
 * (functions/adapters/dynamodb/templates.ts) explains how versions and chunks are stored.
 */
import { ServiceError } from '../common/errors.js';
import type { JsonText } from '../common/json-text.js';
import type { Page } from '../common/pagination.js';
import type { TemplatePdfOptions } from '../renders/render-options.js';
import type { TemplateContent } from './template-content.js';

/** A template as the API shows it (spec fields plus the extensions `variables` and `version`). */
export interface Template extends TemplateContent {
  readonly id: string;
  readonly owner_user_id: string;
  readonly name: string;
  readonly is_public: boolean;
  /**
   * Public templates: the first version other accounts may read and render (the one that was
   * current when it was made public; later ones too). Earlier versions stay the owner's. Private:
   * null.
   */
  readonly public_since_version: number | null;
  /** Always true: another account's render of it runs with no network egress at all. */
  readonly renders_offline_for_others: true;
  readonly created_at: string;
  readonly updated_at: string;
  readonly version: number;
  readonly header_html: string | null;
  readonly footer_html: string | null;
  readonly sample_variables: JsonText | null;
  readonly pdf_options: TemplatePdfOptions | null;
}

/**
 * The system account whose public templates are the starters (issue 40; lib/starters): seeded,
 * never signed in to (no session or key is ever issued for it; a Cognito sub is a UUID, never
 * this), listed alone by GET /v1/templates/public?starters=true.
 */
export const STARTER_ACCOUNT_ID = 'system:starters';

export const templateNotFound = (templateId: string) =>
  new ServiceError('PDF_TEMPLATE_NOT_FOUND', `Template ${templateId} was not found`);

export interface TemplateStore {
  /** The content's weight in an answer; content heavier than this cannot be saved. */
  readonly maxContentBytes: number;
  /** Version 1 first, then the record that points to it. */
  create(
    template: Pick<Template, 'id' | 'owner_user_id' | 'name' | 'is_public'>,
    content: TemplateContent,
  ): Promise<Template>;
  /**
   * The template at `version` (default: the current one) if the caller owns it, or it is public
   * and the version is one of its public ones (public_since_version and later); another account's
   * private template, or a version from before it was made public, does not exist. Read
   * consistently: a template made private is refused on the very next request.
   */
  getReadable(templateId: string, accountId: string, version?: number): Promise<Template>;
  rename(templateId: string, ownerId: string, name: string): Promise<Template>;
  /**
   * A public template is listed by listPublic; a private one is not. Made public, its current
   * version is its first public one (public_since_version); made private, it has none.
   */
  setVisibility(templateId: string, ownerId: string, isPublic: boolean): Promise<Template>;
  /**
   * New content (and perhaps a new name) as a new version. Answers the template as this edit made
   * it: when a concurrent edit took a later version first, this one stays in the history (and
   * renderable by its number) and the answer says which version it became.
   */
  revise(templateId: string, ownerId: string, content: TemplateContent, name?: string): Promise<Template>;
  remove(templateId: string, ownerId: string): Promise<void>;
  listOwned(accountId: string, page: Page): Promise<Template[]>;
  listPublic(page: Page): Promise<Template[]>;
  /** A version's content as stored, or undefined (for tests and tools). */
  readVersion(templateId: string, version: number): Promise<TemplateContent | undefined>;
}
