/** The account's usage (spec: /v1/usage, key or session; shape per the contract). */
import { z } from 'zod';
import { KEY_OR_SESSION, resource, route } from '../route-declaration.js';
import { PARTITION_PREFIXES } from '../table.js';

const timestamp = z.string().describe('ISO 8601 UTC with milliseconds');

export const usageSchema = z.object({
  plan: z.string(),
  period_start: timestamp.describe('the first instant of this calendar month (UTC)'),
  period_end: timestamp.describe('the first instant of the next calendar month (UTC)'),
  renders_used: z
    .number()
    .int()
    .describe("this month's quota units in use: completed renders, and renders still running"),
  renders_limit: z.number().int().describe("the plan's monthly renders"),
  renders_remaining: z.number().int(),
  rate_limit: z.object({
    limit: z.number().int().describe('render requests per window'),
    window_seconds: z.number().int().describe('fixed windows aligned to the UTC clock minute'),
    remaining: z.number().int().describe('left in the current window'),
  }),
  pdf_bytes: z.number().int().describe("total size of this month's completed PDFs"),
  render_ms: z.number().int().describe("total render duration of this month's completed PDFs"),
  included_units: z.number().int().describe("units of renders_used within the plan's monthly renders"),
  overage_units: z
    .number()
    .int()
    .describe('units of renders_used past the monthly renders (plans that allow overage; else 0)'),
  overage_limit: z.number().int().describe('overage units the plan allows a month (0: the quota is a wall)'),
  estimated_charge: z
    .object({
      currency: z.string().describe('ISO 4217'),
      monthly_price: z.number(),
      unit_price_overage: z.number(),
      overage_amount: z.number().describe('overage_units × unit_price_overage'),
      total: z.number().describe('monthly_price + overage_amount, rounded to 6 decimals'),
    })
    .nullable()
    .describe("this month's charge so far, when the plan carries prices; else null"),
});

export const usageResource = resource({
  name: 'usage',
  description: 'The usage API: plan, monthly quota and totals, rate limit',
  // It reads the month's counters and the rate window, both in the account's partition.
  needs: { table: { actions: ['dynamodb:GetItem'], partitions: [PARTITION_PREFIXES.account] } },
  routes: {
    getUsage: route({
      method: 'GET',
      path: '/v1/usage',
      credentials: KEY_OR_SESSION,
      summary: "This month's usage and the rate limit's current window (reading it counts against nothing)",
      success: { status: 200, description: 'usage', body: { name: 'Usage', schema: usageSchema } },
      errors: [],
    }),
  },
});
