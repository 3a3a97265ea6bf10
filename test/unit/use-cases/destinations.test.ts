/**
 * The destination use cases (domain/destinations/destinations.ts) as the composition root builds
 * them (functions/services.ts: destinationManagement), on the memory store and the memory writer
 * (both held to test/contract/destinations.contract.ts with the DynamoDB store and the STS+S3
 * writer), with the real keyed external ids.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ServiceError } from '../../../functions/domain/common/errors.js';
import { destinationKey, EXTERNAL_ID_PREFIX } from '../../../functions/domain/destinations/destinations.js';
import * as build from '../../../functions/services.js';
import { destinationManagement, pdfJobs } from '../../../functions/services.js';
import { readTemplateDataText } from '../../../functions/templating/index.js';
import { caller, type MemoryServices, memoryServices } from '../../helpers/memory-services.js';

let m: MemoryServices;
afterEach(async () => {
  await m?.close();
});

const ROLE = 'arn:aws:iam::123456789012:role/pdf-delivery';
const body = {
  name: 'invoices',
  bucket: 'customer-invoices',
  region: 'eu-west-1',
  role_arn: ROLE,
  key_template: 'invoices/{{ job.created_at[:7] }}/{{ job.id }}.pdf',
};

const refusal = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (e) {
    if (e instanceof ServiceError) return { code: e.code, message: e.message, details: e.details };
    throw e;
  }
  throw new Error('not refused');
};

describe('destinations', () => {
  it('refuses a role that does not trust the service yet, naming the external id; the same request works once it does', async () => {
    m = memoryServices();
    const ada = caller();
    const destinations = m.services.get(destinationManagement);
    const first = await refusal(destinations.create(ada, body));
    expect(first.code).toBe('DESTINATION_UNREACHABLE');
    expect(first.details?.[0]).toMatchObject({ field: 'role_arn' });
    const externalId = /the external id is (pdf-service-[0-9a-f]+)/.exec(first.message)?.[1] ?? '';
    expect(externalId.startsWith(EXTERNAL_ID_PREFIX)).toBe(true);

    // The customer writes the trust policy with that id, and creates the bucket.
    m.destinationWriter.addBucket(body.bucket, { region: body.region, roleArn: ROLE, externalId });
    const created = await destinations.create(ada, body);
    expect(created).toMatchObject({ ...body, external_id: externalId, prefix: '' });
    expect(created.id).toMatch(/^dst_/);
    // The probe object was written and deleted: the bucket holds nothing.
    expect([...m.destinationWriter.objects(body.bucket).keys()]).toEqual([]);
    expect(await destinations.get(ada, created.id)).toEqual(created);
    expect(await destinations.list(ada)).toEqual([created]);
  });

  it('gives another account another external id for the same role, and never shows it the destination', async () => {
    m = memoryServices();
    const ada = caller();
    const eve = caller();
    const destinations = m.services.get(destinationManagement);
    const idOf = async (who: ReturnType<typeof caller>) =>
      /the external id is (\S+?)[;) ]/.exec((await refusal(destinations.create(who, body))).message)?.[1];
    const adas = await idOf(ada);
    const eves = await idOf(eve);
    expect(adas).toBeDefined();
    expect(eves).toBeDefined();
    expect(adas).not.toBe(eves);
    m.destinationWriter.addBucket(body.bucket, {
      region: body.region,
      roleArn: ROLE,
      externalId: adas ?? '',
    });
    const created = await destinations.create(ada, body);
    // Eve naming Ada's role gets her own id, which Ada's trust policy does not hold: refused.
    expect((await refusal(destinations.create(eve, body))).code).toBe('DESTINATION_UNREACHABLE');
    expect((await refusal(destinations.get(eve, created.id))).code).toBe('DESTINATION_NOT_FOUND');
    expect((await refusal(destinations.delete(eve, created.id))).code).toBe('DESTINATION_NOT_FOUND');
    expect(await destinations.list(eve)).toEqual([]);
    expect(await destinations.delete(ada, created.id)).toEqual(created);
    expect((await refusal(destinations.get(ada, created.id))).code).toBe('DESTINATION_NOT_FOUND');
  });

  it('names the reason when the bucket is missing, in another region, or refuses the put or the delete', async () => {
    m = memoryServices();
    const ada = caller();
    const destinations = m.services.get(destinationManagement);
    const externalId = /the external id is (\S+?)[;) ]/.exec(
      (await refusal(destinations.create(ada, body))).message,
    )?.[1] as string;
    const reason = async (bucket: string, region = body.region) =>
      (await refusal(destinations.create(ada, { ...body, bucket, region }))).details?.[0];
    m.destinationWriter.addBucket('elsewhere', { region: 'us-east-1', roleArn: ROLE, externalId });
    m.destinationWriter.addBucket('read-only', {
      region: body.region,
      roleArn: ROLE,
      externalId,
      mayPut: false,
    });
    m.destinationWriter.addBucket('no-delete', {
      region: body.region,
      roleArn: ROLE,
      externalId,
      mayDelete: false,
    });
    expect(await reason('missing-bucket')).toMatchObject({ field: 'bucket', rule: 'bucket_not_found' });
    expect(await reason('elsewhere')).toMatchObject({ field: 'region', rule: 'wrong_region' });
    expect(await reason('read-only')).toMatchObject({ field: 'bucket', rule: 'put_denied' });
    expect(await reason('no-delete')).toMatchObject({ field: 'bucket', rule: 'delete_denied' });
    expect(await destinations.list(ada)).toEqual([]);
  });

  it('refuses a key template that does not parse, reads more than job, or makes an unsafe key, before any probe', async () => {
    m = memoryServices();
    const ada = caller();
    const destinations = m.services.get(destinationManagement);
    for (const [key_template, prefix] of [
      ['invoices/{{ job.id', undefined],
      ['{{ customer }}/{{ job.id }}.pdf', undefined],
      ['invoices//{{ job.id }}.pdf', undefined],
      ['../{{ job.id }}.pdf', undefined],
      ['/{{ job.id }}.pdf', undefined],
      ['{{ job.id * 200 }}', undefined],
      ['{{ job.id }}.pdf', '../'],
      ['{% if false %}x{% endif %}', undefined],
    ] as const) {
      const refused = await refusal(destinations.create(ada, { ...body, key_template, prefix }));
      expect(refused.code, key_template).toBe('INVALID_DESTINATION');
      expect(refused.details?.[0]?.field).toBe('key_template');
    }
    expect(m.destinationWriter.putAttempts).toBe(0);
  });

  it('renders the key of a job from its template and prefix', () => {
    const job = {
      id: 'job_01JABCDEFGHJKMNPQRSTVWXYZ0',
      created_at: '2026-11-28T10:00:00.000Z',
      kind: 'render',
      reference: 'INV-7',
      file_name: 'invoice-7.pdf',
      batch_id: null,
      template_id: null,
    };
    expect(destinationKey({ prefix: 'pdf/', key_template: body.key_template }, job)).toBe(
      'pdf/invoices/2026-11/job_01JABCDEFGHJKMNPQRSTVWXYZ0.pdf',
    );
    expect(
      destinationKey({ prefix: '', key_template: '{{ job.reference or job.id }}/{{ job.file_name }}' }, job),
    ).toBe('INV-7/invoice-7.pdf');
  });

  it('stops a key template that loops at its bound, at creation and at delivery (a loop only some jobs take)', async () => {
    m = memoryServices();
    const ada = caller();
    const destinations = m.services.get(destinationManagement);
    const nested = '{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}';
    for (const key_template of [
      `${nested}{{ job.id }}.pdf`,
      '{% for i in range(100000000) %}x{% endfor %}',
      '{{ (job.id ~ "x") * 100000000 }}',
      '{% macro m(n) %}{{ m(n) }}{% endmacro %}{{ m(1) }}',
    ]) {
      const refused = await refusal(destinations.create(ada, { ...body, key_template }));
      expect(refused.code, key_template).toBe('INVALID_DESTINATION');
      expect(refused.details?.[0]?.field).toBe('key_template');
    }
    expect(m.destinationWriter.putAttempts).toBe(0);
    // The sample job at creation takes no loop; a job whose reference is "bomb" does, at delivery.
    const trap = `{% if job.reference == 'bomb' %}${nested}{% endif %}{{ job.id }}.pdf`;
    const job = {
      id: 'job_01JABCDEFGHJKMNPQRSTVWXYZ0',
      created_at: '2026-11-28T10:00:00.000Z',
      kind: 'render',
      reference: 'bomb',
      file_name: null,
      batch_id: null,
      template_id: null,
    };
    expect(destinationKey({ prefix: '', key_template: trap }, { ...job, reference: 'INV-7' })).toBe(
      'job_01JABCDEFGHJKMNPQRSTVWXYZ0.pdf',
    );
    let error: unknown;
    try {
      destinationKey({ prefix: '', key_template: trap }, job);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ServiceError);
    expect((error as ServiceError).code).toBe('INVALID_DESTINATION');
    expect((error as ServiceError).message).toMatch(/100 ms limit/);
  });

  it('wires a sync render that names a destination to its delivery: queued when it completes, shown on the job', async () => {
    m = memoryServices();
    const ada = caller();
    const destinations = m.services.get(destinationManagement);
    const externalId = /the external id is (pdf-service-[0-9a-f]+)/.exec(
      (await refusal(destinations.create(ada, body))).message,
    )?.[1] as string;
    m.destinationWriter.addBucket(body.bucket, { region: body.region, roleArn: ROLE, externalId });
    const created = await destinations.create(ada, body);
    const rendered = await m.services.get(pdfJobs).create(ada, {
      source: { kind: 'inline', html: '<p>hi</p>', headerHtml: null, footerHtml: null },
      variables: readTemplateDataText('{}'),
      options: {},
      idempotency: null,
      mode: 'sync',
      webhookId: null,
      destinationId: created.id,
    });
    const { job } = rendered.job;
    expect(job).toMatchObject({ status: 'completed', destination_id: created.id });
    // Recorded on the job's item as it completed (the render's own answer was made before).
    expect((await m.jobs.get(ada.accountId, job.id))?.delivery).toMatchObject({
      status: 'pending',
      attempts: 0,
      bucket: body.bucket,
    });
    const deliverer = m.services.get(build.deliverer);
    const messages = m.deliveryQueue.drain();
    expect(messages).toEqual([{ account_id: ada.accountId, job_id: job.id, attempt: 1 }]);
    expect(await deliverer.handle(messages[0] as never)).toBe('delivered');
    const key = `invoices/${job.created_at.slice(0, 7)}/${job.id}.pdf`;
    const stored = m.storage.object(job.object_key)?.body as Uint8Array;
    expect(Buffer.from(m.destinationWriter.objects(body.bucket).get(key) ?? [])).toEqual(Buffer.from(stored));
    const after = await m.jobs.get(ada.accountId, job.id);
    expect(after?.delivery).toMatchObject({ status: 'delivered', key, attempts: 1 });
    expect(after?.status).toBe('completed');
  });
});
