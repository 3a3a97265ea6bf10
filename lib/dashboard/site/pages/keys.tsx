/** API keys: create (the key shown once), list, revoke. */
import { useRef, useState } from 'preact/hooks';
import type { ApiKey, CreatedApiKey, Template } from '../api.js';
import { CodeSnippets } from '../code-snippets.js';
import { CardTable, ConfirmDialog, ErrorMessage, Loading, PageHeading, useAsync } from '../components.js';
import { useDashboard } from '../context.js';
import { formatDateTime } from '../format.js';
import { templateRenderBody } from '../snippets.js';

/** What the key-created panel offers to render when the account has no template yet: inline html. */
const FIRST_RENDER = {
  html: '<h1>Hello {{ name }}</h1>\n<p>My first PDF from code.</p>',
  variables: { name: 'World' },
};

const NewKey = ({ created, onDone }: { created: CreatedApiKey; onDone: () => void }) => {
  const { api } = useDashboard();
  // The newest template, if any, is what a first render from code most likely wants.
  const latest = useAsync(() => api.request<Template[]>('v1/templates?limit=1'), [api]);
  const template = latest.data?.[0];
  const [copied, setCopied] = useState<'yes' | 'no' | undefined>(undefined);
  const input = useRef<HTMLInputElement>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(created.key);
      setCopied('yes');
    } catch {
      // No clipboard permission: select the key so that a keyboard copy takes it.
      input.current?.select();
      setCopied('no');
    }
  };
  return (
    <section class="panel new-key" aria-labelledby="new-key-title">
      <h2 id="new-key-title">Key “{created.name}” created</h2>
      <p class="warning">
        <strong>Copy this key now: you will not see it again.</strong> Only its prefix is kept on view; if you
        lose it, revoke it and create another.
      </p>
      <label for="new-key-value">Your new API key</label>
      <div class="copy-row">
        <input
          id="new-key-value"
          ref={input}
          class="mono"
          readOnly
          value={created.key}
          onFocus={(e) => e.currentTarget.select()}
        />
        <button type="button" onClick={copy}>
          Copy
        </button>
      </div>
      <p role="status" class="muted">
        {copied === 'yes'
          ? 'Copied to the clipboard.'
          : copied === 'no'
            ? 'Selected: press Ctrl+C (⌘C) to copy.'
            : ''}
      </p>
      <h3 id="first-render-title">A first render with it</h3>
      {latest.loading ? (
        <Loading what="code for a first render" />
      ) : (
        <>
          <p>
            {template
              ? `Run this to render your latest template, “${template.name}”, with its sample data`
              : 'Run this to render a first PDF'}
            , then open the <code>download_url</code> of the answer. Each template’s page has the same code
            with its id and sample data.
          </p>
          <CodeSnippets
            id="first-render"
            body={template ? templateRenderBody(template.id, template.sample_variables ?? {}) : FIRST_RENDER}
            keyValue={created.key}
          />
        </>
      )}
      <button type="button" onClick={onDone}>
        I have copied the key
      </button>
    </section>
  );
};

export const KeysPage = () => {
  const { api } = useDashboard();
  const keys = useAsync(() => api.request<ApiKey[]>('v1/api-keys'), []);
  const [name, setName] = useState('');
  const [creating, setCreating] = useState(false);
  const [createError, setCreateError] = useState<unknown>(undefined);
  const [created, setCreated] = useState<CreatedApiKey | undefined>(undefined);
  const [revoking, setRevoking] = useState<ApiKey | undefined>(undefined);

  const create = async (e: Event) => {
    e.preventDefault();
    setCreating(true);
    setCreateError(undefined);
    try {
      const key = await api.request<CreatedApiKey>('v1/api-keys', { method: 'POST', body: { name } });
      setCreated(key);
      setName('');
      keys.reload();
    } catch (err) {
      setCreateError(err);
    } finally {
      setCreating(false);
    }
  };

  return (
    <>
      <PageHeading>API keys</PageHeading>
      <p class="lead">
        Keys let scripts and servers render PDFs, read usage and use templates. They cannot manage keys or
        templates: that takes signing in here.
      </p>
      {created ? (
        <NewKey created={created} onDone={() => setCreated(undefined)} />
      ) : (
        <form class="panel inline-form" onSubmit={create}>
          <div class="field">
            <label for="key-name">Key name</label>
            <input
              id="key-name"
              required
              maxLength={100}
              placeholder="e.g. invoices-prod"
              value={name}
              onInput={(e) => setName(e.currentTarget.value)}
              aria-describedby={createError ? 'key-create-error' : undefined}
              aria-invalid={createError ? true : undefined}
            />
          </div>
          <button type="submit" class="primary" disabled={creating}>
            {creating ? 'Creating…' : 'Create key'}
          </button>
          <ErrorMessage error={createError} id="key-create-error" />
        </form>
      )}

      <h2>Your keys</h2>
      {keys.loading && !keys.data && <Loading what="keys" />}
      <ErrorMessage error={keys.error} />
      {keys.data && keys.data.length === 0 && <p class="muted">No keys yet.</p>}
      {keys.data && keys.data.length > 0 && (
        <CardTable
          caption="API keys, newest first"
          columns={['Name', 'Prefix', 'Created', 'Last used', 'Status', { label: 'Actions', hidden: true }]}
        >
          {keys.data.map((k) => (
            <tr key={k.id} class={k.revoked_at ? 'revoked' : undefined}>
              <th scope="row">{k.name}</th>
              <td class="mono" data-label="Prefix">
                {k.prefix}…
              </td>
              <td data-label="Created">{formatDateTime(k.created_at)}</td>
              <td data-label="Last used">{k.last_used_at ? formatDateTime(k.last_used_at) : 'Never'}</td>
              <td data-label="Status">
                {k.revoked_at ? `Revoked ${formatDateTime(k.revoked_at)}` : 'Active'}
              </td>
              <td class="row-actions">
                {!k.revoked_at && (
                  <button type="button" class="danger small" onClick={() => setRevoking(k)}>
                    Revoke<span class="visually-hidden"> key {k.name}</span>
                  </button>
                )}
              </td>
            </tr>
          ))}
        </CardTable>
      )}
      {revoking && (
        <ConfirmDialog
          title={`Revoke key “${revoking.name}”?`}
          confirm="Revoke key"
          onClose={() => setRevoking(undefined)}
          onConfirm={async () => {
            await api.request<ApiKey>(`v1/api-keys/${encodeURIComponent(revoking.id)}`, { method: 'DELETE' });
            keys.reload();
          }}
        >
          <p>
            Requests with <span class="mono">{revoking.prefix}…</span> are refused from the very next one.
            This cannot be undone.
          </p>
        </ConfirmDialog>
      )}
    </>
  );
};
