import { pdfJobs, route } from '../core/runtime.js';
import { parsePage } from '../domain/pagination.js';

export const listPdfs = route(
  { routeKey: 'GET /v1/pdf', query: parsePage },
  async ({ principal, query }) => ({
    status: 200,
    body: await pdfJobs.list(principal, query.limit, query.offset),
  }),
);
