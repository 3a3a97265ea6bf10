import { pdfJobs, route } from '../core/runtime.js';

export const getPdf = route({ routeKey: 'GET /v1/pdf/{job_id}' }, async ({ principal, pathParameters }) => ({
  status: 200,
  body: await pdfJobs.get(principal, pathParameters.job_id ?? ''),
}));
