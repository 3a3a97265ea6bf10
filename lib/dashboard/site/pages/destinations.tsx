/**
 * Destinations (issue 36): S3 buckets in the customer's AWS account, reached through their role.
 * Create (the first try for a role names the external id its trust policy needs), list, delete.
 */
import { useState } from 'preact/hooks';
import type { Destination } from '../api.js';
import { CardTable, ConfirmDialog, ErrorMessage, Loading, PageHeading, useAsync } from '../components.js';
import { useDashboard } from '../context.js';
import { formatDateTime } from '../format.js';

const EMPTY = {
  name: '',
  bucket: '',
  region: 'eu-west-1',
  role_arn: '',
  key_template: 'invoices/{{ job.created_at[:7] }}/{{ job.id }}.pdf',
  prefix: '',
};

const FIELDS: readonly { key: keyof typeof EMPTY; label: string; placeholder?: string }[] = [
  { key: 'name', label: 'Name', placeholder: 'e.g. invoices archive' },
  { key: 'bucket', label: 'Bucket', placeholder: 'my-invoices' },
  { key: 'region', label: 'Region' },
  { key: 'role_arn', label: 'Role ARN', placeholder: 'arn:aws:iam::123456789012:role/pdf-delivery' },
  { key: 'key_template', label: 'Key template' },
  { key: 'prefix', label: 'Prefix (optional)', placeholder: 'pdf/' },
];

export const DestinationsPage = () => {
  const { api } = useDashboard();
  const list = useAsync(() => api.request<Destination[]>('v1/destinations'), []);
  const [form, setForm] = useState(EMPTY);
  const [creating, setCreating] = useState(false);
  const [createError, setCreateError] = useState<unknown>(undefined);
  const [deleting, setDeleting] = useState<Destination | undefined>(undefined);

  const create = async (e: Event) => {
    e.preventDefault();
    setCreating(true);
    setCreateError(undefined);
    try {
      const { prefix, ...rest } = form;
      await api.request<Destination>('v1/destinations', {
        method: 'POST',
        body: prefix ? { ...rest, prefix } : rest,
      });
      setForm(EMPTY);
      list.reload();
    } catch (err) {
      setCreateError(err);
    } finally {
      setCreating(false);
    }
  };

  return (
    <>
      <PageHeading>Destinations</PageHeading>
      <p class="lead">
        Your own S3 buckets, reached through a role you create for the service. The first try for a role names
        the external id its trust policy must require (<code>sts:ExternalId</code>); add it, then create
        again. Creating one writes and deletes a probe object, so a destination that does not work is refused
        with the reason.
      </p>
      <form class="panel" onSubmit={create}>
        {FIELDS.map((f) => (
          <div class="field" key={f.key}>
            <label for={`destination-${f.key}`}>{f.label}</label>
            <input
              id={`destination-${f.key}`}
              class={f.key === 'key_template' || f.key === 'role_arn' ? 'mono' : undefined}
              required={f.key !== 'prefix'}
              placeholder={f.placeholder}
              value={form[f.key]}
              onInput={(e) => setForm({ ...form, [f.key]: e.currentTarget.value })}
              aria-describedby={createError ? 'destination-create-error' : undefined}
            />
          </div>
        ))}
        <button type="submit" class="primary" disabled={creating}>
          {creating ? 'Checking the bucket…' : 'Create destination'}
        </button>
        <ErrorMessage error={createError} id="destination-create-error" />
      </form>

      <h2>Your destinations</h2>
      {list.loading && !list.data && <Loading what="destinations" />}
      <ErrorMessage error={list.error} />
      {list.data && list.data.length === 0 && <p class="muted">No destinations yet.</p>}
      {list.data && list.data.length > 0 && (
        <CardTable
          caption="Destinations, newest first"
          columns={[
            'Name',
            'Bucket',
            'Key template',
            'External id',
            'Created',
            { label: 'Actions', hidden: true },
          ]}
        >
          {list.data.map((d) => (
            <tr key={d.id}>
              <th scope="row">{d.name}</th>
              <td data-label="Bucket">
                {d.bucket} ({d.region})
              </td>
              <td class="mono" data-label="Key template">
                {d.prefix}
                {d.key_template}
              </td>
              <td class="mono" data-label="External id">
                {d.external_id}
              </td>
              <td data-label="Created">{formatDateTime(d.created_at)}</td>
              <td class="row-actions">
                <button type="button" class="danger small" onClick={() => setDeleting(d)}>
                  Delete<span class="visually-hidden"> destination {d.name}</span>
                </button>
              </td>
            </tr>
          ))}
        </CardTable>
      )}
      {deleting && (
        <ConfirmDialog
          title={`Delete destination “${deleting.name}”?`}
          confirm="Delete destination"
          onClose={() => setDeleting(undefined)}
          onConfirm={async () => {
            await api.request<Destination>(`v1/destinations/${encodeURIComponent(deleting.id)}`, {
              method: 'DELETE',
            });
            list.reload();
          }}
        >
          <p>Renders naming it are refused from then on. What it delivered stays in your bucket.</p>
        </ConfirmDialog>
      )}
    </>
  );
};
