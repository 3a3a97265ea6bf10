/**
 * The typed clients' types (lib/dashboard/site/api-types.ts, used by the dashboard and
 * test/integration/typed-client.test.ts; clients/typescript/src/api-types.ts, the TypeScript
 * client's) are generated from the OpenAPI document; they must be what the document generates today.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { clientTypes } from '../../bin/openapi.js';

describe('typed client', () => {
  it('clients/typescript is generated from the current OpenAPI document (regenerate: npm run --silent openapi -- --types clients/typescript/src/api-types.ts)', async () => {
    const committed = readFileSync(
      new URL('../../clients/typescript/src/api-types.ts', import.meta.url),
      'utf8',
    );
    expect(committed).toBe(await clientTypes());
  });

  it('is generated from the current OpenAPI document (regenerate: npm run --silent openapi -- --types lib/dashboard/site/api-types.ts)', async () => {
    const committed = readFileSync(new URL('../../lib/dashboard/site/api-types.ts', import.meta.url), 'utf8');
    expect(committed).toBe(await clientTypes());
  });
});
