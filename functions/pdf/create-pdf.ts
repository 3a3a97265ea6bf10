import { config, pdfJobs, route } from '../core/runtime.js';
import { checkIdempotencyKey } from '../domain/idempotency.js';
import { createPdfSchema, parseCreatePdf } from '../domain/pdf-request.js';
import { rateLimitHeaders } from '../domain/usage.js';

const schema = createPdfSchema(config.limits);

export const createPdf = route(
  {
    routeKey: 'POST /v1/pdf',
    beforeValidation: async (principal) => rateLimitHeaders(await pdfJobs.hitRateLimit(principal)),
    body: (body) => parseCreatePdf(body, schema),
  },
  async ({ principal, body, headers }) => ({
    status: 201,
    body: await pdfJobs.create(principal, body, checkIdempotencyKey(headers['idempotency-key'])),
  }),
);
