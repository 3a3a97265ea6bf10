/** The current account (spec: /v1/me, session only; shape per the contract). */
import { z } from 'zod';
import { resource, route, SESSION_ONLY } from '../route-declaration.js';
import { PARTITION_PREFIXES } from '../table.js';

export const accountSchema = z.object({
  id: z.string().describe("the account id: the session token's sub"),
  email: z.string().nullable().describe("the session token's email"),
  plan: z.string().describe('the plan the account is on, e.g. free'),
  created_at: z.string().describe('ISO 8601 UTC with milliseconds: the account’s first session request'),
});

export const meResource = resource({
  name: 'me',
  description: 'The me API: the signed-in account',
  // It reads the account (authentication has made sure it exists): no write of its own.
  needs: { table: { actions: ['dynamodb:GetItem'], partitions: [PARTITION_PREFIXES.account] } },
  routes: {
    getMe: route({
      method: 'GET',
      path: '/v1/me',
      credentials: SESSION_ONLY,
      summary: 'The signed-in account: id, email, plan',
      success: { status: 200, description: 'the account', body: { name: 'Account', schema: accountSchema } },
      errors: [],
    }),
  },
});
