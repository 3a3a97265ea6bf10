import { describe, expect, it } from 'vitest';
import { errorStatus } from '../../functions/core/responses.js';
import { openApiDocument } from '../../functions/openapi.js';
import { routes } from '../../functions/routes.js';

describe('OpenAPI document', () => {
  const doc = openApiDocument();

  it('describes exactly the routes of the route table, with their credentials', () => {
    const described = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(described.sort()).toEqual(routes.map((r) => `${r.method} ${r.path}`).sort());
    expect(doc.paths['/v1/pdf']?.post).toMatchObject({ security: [{ apiKey: [] }, { session: [] }] });
  });

  it('takes the render request from the validating schema: unknown fields refused, ranges stated', () => {
    // biome-ignore lint/suspicious/noExplicitAny: a JSON Schema document, checked by the assertions
    const request = doc.components.schemas.CreatePdfRequest as Record<string, any>;
    expect(request.additionalProperties).toBe(false);
    // The widest async budget a deployment may set; each mode's own range is in the description.
    expect(request.properties.page_load.properties.timeout_ms).toMatchObject({
      minimum: 1000,
      maximum: 840000,
      description: expect.stringContaining('1000 to 120000 for a sync render'),
    });
    expect(request.properties.format.enum).toEqual(['A4', 'A3', 'A5', 'LETTER', 'LEGAL']);
  });

  it('lists each error response under the status the service answers it with', () => {
    const post = doc.paths['/v1/pdf']?.post as { responses: Record<string, { description: string }> };
    for (const [status, response] of Object.entries(post.responses)) {
      if (status.startsWith('2')) continue;
      for (const code of response.description.split(', ')) {
        expect(errorStatus[code as keyof typeof errorStatus]).toBe(Number(status));
      }
    }
    expect(post.responses['504']?.description).toBe('PDF_RENDERING_TIMEOUT');
  });
});
