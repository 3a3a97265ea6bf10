/**
 * A client generated from the OpenAPI document (openapi-typescript types + openapi-fetch) works
 * against the service: the paths, bodies, parameters and answers it knows are the real ones.
 */
import createClient from 'openapi-fetch';
import { describe, expect, it } from 'vitest';
import type { paths } from '../../lib/dashboard/site/api-types.js';
import { useLocalStack } from '../helpers/local-stack.js';

const local = useLocalStack();

describe('a client generated from the OpenAPI document', () => {
  it('renders, lists and reads a job, and reads a typed error', async () => {
    const token = await local.sessionToken();
    const client = createClient<paths>({
      baseUrl: local.stack.baseUrl,
      headers: { Authorization: `Bearer ${token}` },
    });

    const created = await client.POST('/v1/pdf', {
      body: { html: '<h1>Hello {{ name }}</h1>', variables: { name: 'typed' }, format: 'A5' },
    });
    expect(created.response.status).toBe(201);
    const job = created.data;
    expect(job?.status).toBe('completed');
    expect(job?.page_count).toBe(1);

    const listed = await client.GET('/v1/pdf', { params: { query: { limit: 5 } } });
    expect(listed.data?.map((j) => j.id)).toContain(job?.id);

    const one = await client.GET('/v1/pdf/{job_id}', { params: { path: { job_id: job?.id ?? '' } } });
    expect(one.data?.download_url).toMatch(/^http/);

    const missing = await client.GET('/v1/pdf/{job_id}', {
      params: { path: { job_id: 'job_01J00000000000000000000000' } },
    });
    expect(missing.response.status).toBe(404);
    expect(missing.error?.error.code).toBe('PDF_JOB_NOT_FOUND');
    expect(missing.response.headers.get('x-request-id')).toBe(missing.error?.error.request_id);
  });
});
