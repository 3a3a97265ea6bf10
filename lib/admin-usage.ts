/**
 * The operator's monthly usage export (`npm run admin -- usage --month yyyy-mm`, issue 39): every
 * account's month from the usage ledger (functions/domain/accounts/usage-ledger.ts), read through
 * the ledger's month index (eight queries, never a scan of the table), with each account's plan
 * and the month's estimated charge as GET /v1/usage works it out.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createAccountStore } from '../functions/adapters/dynamodb/accounts.js';
import { createUsageLedger } from '../functions/adapters/dynamodb/usage-ledger.js';
import { planAllowance } from '../functions/domain/accounts/usage.js';
import { summarizeMonth } from '../functions/domain/accounts/usage-ledger.js';
import { estimatedCharge, splitUnits } from '../functions/domain/accounts/usage-report.js';
import { DEFAULT_PLAN, type Plan } from '../functions/settings.js';

export const USAGE_FORMATS = ['csv', 'jsonl'] as const;
export type UsageFormat = (typeof USAGE_FORMATS)[number];

/** A month as the export takes it: `yyyy-mm`. */
export const MONTH_PATTERN = /^\d{4}-(0[1-9]|1[0-2])$/;

export interface AccountMonthRow {
  readonly month: string;
  readonly account_id: string;
  /** The account's plan now (the ledger's entries are billed on it). */
  readonly plan: string;
  readonly renders: number;
  readonly pages: number;
  readonly bytes: number;
  readonly units: number;
  readonly included_units: number;
  readonly overage_units: number;
  readonly currency: string | null;
  readonly estimated_charge: number | null;
}

/** Every account's row of `month`, in account order. */
export const monthRows = async (
  db: DynamoDBDocumentClient,
  tableName: string,
  month: string,
  plans: Readonly<Record<string, Plan>>,
): Promise<AccountMonthRow[]> => {
  // Entries are never read back past their retention; the option only sets what is written.
  const ledger = createUsageLedger(db, tableName, { retentionSeconds: 0 });
  const accounts = createAccountStore(db, tableName, { now: () => new Date() });
  const rows: AccountMonthRow[] = [];
  for (const summary of summarizeMonth(await ledger.ofMonth(month))) {
    const account = await accounts.get(summary.account_id);
    const planName = account && Object.hasOwn(plans, account.plan) ? account.plan : DEFAULT_PLAN;
    const plan = planAllowance(plans, planName, DEFAULT_PLAN);
    const units = splitUnits(plan, summary.units);
    const charge = estimatedCharge(plan, units.overage);
    rows.push({
      month,
      account_id: summary.account_id,
      plan: planName,
      renders: summary.renders,
      pages: summary.pages,
      bytes: summary.bytes,
      units: summary.units,
      included_units: units.included,
      overage_units: units.overage,
      currency: charge?.currency ?? null,
      estimated_charge: charge?.total ?? null,
    });
  }
  return rows;
};

const COLUMNS = [
  'month',
  'account_id',
  'plan',
  'renders',
  'pages',
  'bytes',
  'units',
  'included_units',
  'overage_units',
  'currency',
  'estimated_charge',
] as const satisfies readonly (keyof AccountMonthRow)[];

/** RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled. */
const csvField = (value: unknown): string => {
  const text = value === null || value === undefined ? '' : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
};

export const formatRows = (rows: readonly AccountMonthRow[], format: UsageFormat): string =>
  format === 'csv'
    ? [COLUMNS.join(','), ...rows.map((r) => COLUMNS.map((c) => csvField(r[c])).join(','))]
        .map((l) => `${l}\n`)
        .join('')
    : rows.map((r) => `${JSON.stringify(r)}\n`).join('');
