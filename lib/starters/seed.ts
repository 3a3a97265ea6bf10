/**
 * Seeds the starter templates (starters.ts) as public templates of STARTER_ACCOUNT_ID, through
 * the templates' own use cases (the same checks as POST /v1/templates): a missing one is created,
 * one whose content changed is revised (a new version), an unchanged one is left alone; running
 * it again is safe. The local stack runs it at start; the cloud, `npm run admin -- seed-starters`.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createTemplateStore } from '../../functions/adapters/dynamodb/templates.js';
import { JsonText } from '../../functions/domain/common/json-text.js';
import type { Principal } from '../../functions/domain/common/principal.js';
import { createTemplateManagement } from '../../functions/domain/templates/template-management.js';
import { STARTER_ACCOUNT_ID } from '../../functions/domain/templates/templates.js';
import { templateParser } from '../../functions/templating/parse-pool.js';
import { STARTERS } from './starters.js';

const SYSTEM: Principal = {
  accountId: STARTER_ACCOUNT_ID,
  email: undefined,
  credential: 'session',
  plan: 'free',
};

export interface SeedOutcome {
  readonly created: string[];
  readonly revised: string[];
  readonly unchanged: string[];
}

export const seedStarters = async (db: DynamoDBDocumentClient, tableName: string): Promise<SeedOutcome> => {
  const store = createTemplateStore(db, tableName, { now: () => new Date() }, { onFault: () => {} });
  const templates = createTemplateManagement({ store, parser: templateParser });
  const existing = await store.listOwned(STARTER_ACCOUNT_ID, { limit: 100, offset: 0 });
  const outcome: SeedOutcome = { created: [], revised: [], unchanged: [] };
  // Created last first: a listing, newest first, then shows them in STARTERS' order.
  for (const starter of [...STARTERS].reverse()) {
    const content = {
      html: starter.html,
      header_html: starter.header_html ?? null,
      footer_html: starter.footer_html ?? null,
      sample_variables: new JsonText(JSON.stringify(starter.sample_variables)),
      pdf_options: starter.pdf_options,
    };
    const found = existing.find((t) => t.name === starter.name);
    if (!found) {
      await templates.create(SYSTEM, { name: starter.name, is_public: true, ...content });
      outcome.created.push(starter.name);
      continue;
    }
    const same =
      found.html === content.html &&
      found.header_html === content.header_html &&
      found.footer_html === content.footer_html &&
      found.sample_variables?.text === content.sample_variables.text &&
      JSON.stringify(found.pdf_options) === JSON.stringify(content.pdf_options);
    if (same) {
      outcome.unchanged.push(starter.name);
      continue;
    }
    await templates.update(SYSTEM, found.id, content);
    if (!found.is_public) await templates.setVisibility(SYSTEM, found.id, { is_public: true });
    outcome.revised.push(starter.name);
  }
  for (const list of Object.values(outcome)) list.reverse();
  return outcome;
};
