/**
 * Webhook endpoints: create one (its signing secret shown once, right then), list and delete them,
 * send a test event; an endpoint's page lists its deliveries with every attempt, read again while
 * any is pending, and redelivers one.
 */
import { useRef, useState } from 'preact/hooks';
import type { CreatedWebhook, Webhook, WebhookDelivery } from '../api.js';
import {
  CardTable,
  ConfirmDialog,
  CopyButton,
  ErrorMessage,
  Loading,
  PageHeading,
  useAsync,
} from '../components.js';
import { useDashboard } from '../context.js';
import { formatDateTime, formatDuration } from '../format.js';
import { usePolling } from '../live.js';
import { href } from '../routes.js';
import { usePages } from './paging.js';

type EventType = Webhook['events'][number];

const EVENTS: readonly { readonly type: EventType; readonly what: string }[] = [
  { type: 'job.completed', what: 'an async render finished: its PDF can be downloaded' },
  { type: 'job.failed', what: 'an async render failed' },
  { type: 'batch.completed', what: 'every job of a batch ended' },
  { type: 'job.cancelled', what: 'a pending async render was cancelled' },
];

const NewSecret = ({ created, onDone }: { created: CreatedWebhook; onDone: () => void }) => {
  const input = useRef<HTMLInputElement>(null);
  return (
    <section class="panel new-key new-webhook" aria-labelledby="new-webhook-title">
      <h2 id="new-webhook-title">Endpoint created</h2>
      <p>
        Events for <span class="mono url">{created.url}</span> are signed with this secret (Standard Webhooks:
        the <code>webhook-signature</code> header). Verify each request with it before trusting it.
      </p>
      <p class="warning">
        <strong>Copy this signing secret now: you will not see it again.</strong> If you lose it, delete the
        endpoint and create another.
      </p>
      <label for="new-webhook-secret">Signing secret</label>
      <div class="copy-row">
        <input
          id="new-webhook-secret"
          ref={input}
          class="mono"
          readOnly
          value={created.secret}
          onFocus={(e) => e.currentTarget.select()}
        />
        <CopyButton text={created.secret} what="signing secret" fallback={input} />
      </div>
      <p>
        <button type="button" onClick={onDone}>
          I have copied the secret
        </button>
      </p>
    </section>
  );
};

const CreateForm = ({ onCreated }: { onCreated: (w: CreatedWebhook) => void }) => {
  const { api } = useDashboard();
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [events, setEvents] = useState<ReadonlySet<EventType>>(new Set(EVENTS.map((e) => e.type)));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const created = await api.request<CreatedWebhook>('v1/webhooks', {
        method: 'POST',
        body: {
          url: url.trim(),
          description: description.trim() || null,
          events: EVENTS.map((e) => e.type).filter((t) => events.has(t)),
        },
      });
      setUrl('');
      setDescription('');
      onCreated(created);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const toggle = (type: EventType, on: boolean) => {
    const next = new Set(events);
    if (on) next.add(type);
    else next.delete(type);
    setEvents(next);
  };
  return (
    <form class="panel webhook-form" onSubmit={submit}>
      <div class="field">
        <label for="webhook-url">Endpoint URL</label>
        <input
          id="webhook-url"
          type="url"
          required
          maxLength={2000}
          placeholder="https://example.com/webhooks/pdf"
          value={url}
          onInput={(e) => setUrl(e.currentTarget.value)}
          aria-describedby={error ? 'webhook-create-error' : undefined}
          aria-invalid={error ? true : undefined}
        />
      </div>
      <div class="field">
        <label for="webhook-description">Description (optional)</label>
        <input
          id="webhook-description"
          maxLength={200}
          value={description}
          onInput={(e) => setDescription(e.currentTarget.value)}
        />
      </div>
      <fieldset class="page-options">
        <legend>Events to send</legend>
        {EVENTS.map((e) => (
          <label key={e.type} class="check">
            <input
              type="checkbox"
              name="events"
              value={e.type}
              checked={events.has(e.type)}
              onChange={(ev) => toggle(e.type, ev.currentTarget.checked)}
            />{' '}
            <code>{e.type}</code> <span class="muted">{e.what}</span>
          </label>
        ))}
      </fieldset>
      <button type="submit" class="primary" disabled={busy || events.size === 0}>
        {busy ? 'Creating…' : 'Create endpoint'}
      </button>
      <ErrorMessage error={error} id="webhook-create-error" />
    </form>
  );
};

/** Sends a webhook.test event, then shows the endpoint's deliveries (where it appears). */
const useSendTest = () => {
  const { api } = useDashboard();
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState<string | undefined>(undefined);
  const send = async (webhook: Webhook, after: () => void | Promise<void>) => {
    setBusy(webhook.id);
    setError(undefined);
    try {
      await api.request<WebhookDelivery>(`v1/webhooks/${encodeURIComponent(webhook.id)}/test`, {
        method: 'POST',
      });
      await after();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(undefined);
    }
  };
  return { send, error, busy };
};

const Events = ({ events }: { events: readonly string[] }) => (
  <span class="event-list">
    {events.map((e) => (
      <code key={e}>{e}</code>
    ))}
  </span>
);

export const WebhooksPage = () => {
  const { api } = useDashboard();
  const list = useAsync(() => api.request<Webhook[]>('v1/webhooks'), []);
  const [created, setCreated] = useState<CreatedWebhook | undefined>(undefined);
  const [deleting, setDeleting] = useState<Webhook | undefined>(undefined);
  const test = useSendTest();
  return (
    <>
      <PageHeading>Webhooks</PageHeading>
      <p class="lead">
        Endpoints your servers receive events at: async renders and batches that ended, signed so that you can
        check they come from here. Name one in a render's or batch's <code>webhook_id</code>.
      </p>
      {created ? (
        <NewSecret created={created} onDone={() => setCreated(undefined)} />
      ) : (
        <CreateForm
          onCreated={(w) => {
            setCreated(w);
            list.reload();
          }}
        />
      )}
      <h2>Your endpoints</h2>
      {list.loading && !list.data && <Loading what="endpoints" />}
      <ErrorMessage error={list.error} />
      <ErrorMessage error={test.error} />
      {list.data && list.data.length === 0 && <p class="muted">No endpoints yet.</p>}
      {list.data && list.data.length > 0 && (
        <CardTable
          kind="webhooks"
          caption="Webhook endpoints, newest first"
          columns={['Endpoint', 'Events', 'Created', { label: 'Actions', hidden: true }]}
        >
          {list.data.map((w) => (
            <tr key={w.id} data-webhook-id={w.id}>
              <th scope="row">
                <a class="mono url" href={href.webhook(w.id)}>
                  {w.url}
                </a>
                {w.description && <span class="description">{w.description}</span>}
              </th>
              <td data-label="Events">
                <Events events={w.events} />
              </td>
              <td data-label="Created">{formatDateTime(w.created_at)}</td>
              <td class="row-actions">
                <a class="button small" href={href.webhook(w.id)}>
                  Deliveries<span class="visually-hidden"> of {w.url}</span>
                </a>
                <button
                  type="button"
                  class="small"
                  disabled={test.busy === w.id}
                  onClick={() =>
                    void test.send(w, () => {
                      location.hash = href.webhook(w.id);
                    })
                  }
                >
                  Send test event<span class="visually-hidden"> to {w.url}</span>
                </button>
                <button type="button" class="danger small" onClick={() => setDeleting(w)}>
                  Delete<span class="visually-hidden"> endpoint {w.url}</span>
                </button>
              </td>
            </tr>
          ))}
        </CardTable>
      )}
      {deleting && (
        <DeleteDialog
          webhook={deleting}
          onClose={() => setDeleting(undefined)}
          onDeleted={() => list.reload()}
        />
      )}
    </>
  );
};

const DeleteDialog = ({
  webhook,
  onClose,
  onDeleted,
}: {
  webhook: Webhook;
  onClose: () => void;
  onDeleted: () => void;
}) => {
  const { api } = useDashboard();
  return (
    <ConfirmDialog
      title="Delete this endpoint?"
      confirm="Delete endpoint"
      onClose={onClose}
      onConfirm={async () => {
        await api.request<Webhook>(`v1/webhooks/${encodeURIComponent(webhook.id)}`, { method: 'DELETE' });
        onDeleted();
      }}
    >
      <p>
        Nothing more is sent to <span class="mono url">{webhook.url}</span>, retries included. Renders and
        batches that name it still run. This cannot be undone.
      </p>
    </ConfirmDialog>
  );
};

const DELIVERY_LABEL: Record<WebhookDelivery['status'], string> = {
  pending: 'Pending',
  succeeded: 'Succeeded',
  failed: 'Failed',
};

const Attempts = ({ delivery }: { delivery: WebhookDelivery }) =>
  delivery.attempts.length === 0 ? (
    <span class="muted">None yet</span>
  ) : (
    <ol class="attempts">
      {delivery.attempts.map((a) => (
        <li key={a.attempt} data-attempt={a.attempt}>
          <span class={`status ${a.outcome}`}>{a.outcome === 'succeeded' ? 'Succeeded' : 'Failed'}</span>
          {' · '}
          <span data-field="response-status">
            {a.response_status === null ? 'no response' : `HTTP ${a.response_status}`}
          </span>
          {' · '}
          <span data-field="duration">{formatDuration(a.duration_ms)}</span>
          {' · '}
          <time dateTime={a.attempted_at}>{formatDateTime(a.attempted_at)}</time>
          {a.error && <span class="error-text"> · {a.error}</span>}
        </li>
      ))}
    </ol>
  );

export const WebhookPage = ({ id }: { id: string }) => {
  const { api } = useDashboard();
  const path = `v1/webhooks/${encodeURIComponent(id)}`;
  const webhook = useAsync(() => api.request<Webhook>(path), [path]);
  const deliveries = usePages<WebhookDelivery>((limit, offset) =>
    api.request(`${path}/deliveries?limit=${limit}&offset=${offset}`),
  );
  usePolling(
    deliveries.items.some((d) => d.status === 'pending'),
    deliveries.refresh,
  );
  const test = useSendTest();
  const [deleting, setDeleting] = useState(false);
  const [redeliverError, setRedeliverError] = useState<unknown>(undefined);
  const [redelivering, setRedelivering] = useState<string | undefined>(undefined);
  const redeliver = async (d: WebhookDelivery) => {
    setRedelivering(d.id);
    setRedeliverError(undefined);
    try {
      await api.request<WebhookDelivery>(`${path}/deliveries/${encodeURIComponent(d.id)}/redeliver`, {
        method: 'POST',
      });
      await deliveries.refresh();
    } catch (e) {
      setRedeliverError(e);
    } finally {
      setRedelivering(undefined);
    }
  };
  const w = webhook.data;
  return (
    <>
      <p class="back">
        <a href={href.webhooks}>← Webhooks</a>
      </p>
      <PageHeading>Webhook endpoint</PageHeading>
      {webhook.loading && !w && <Loading what="the endpoint" />}
      <ErrorMessage error={webhook.error} />
      {w && (
        <>
          <dl class="facts">
            <div>
              <dt>URL</dt>
              <dd class="mono url" data-field="webhook-url">
                {w.url}
              </dd>
            </div>
            {w.description && (
              <div>
                <dt>Description</dt>
                <dd>{w.description}</dd>
              </div>
            )}
            <div>
              <dt>Events</dt>
              <dd>
                <Events events={w.events} />
              </dd>
            </div>
            <div>
              <dt>Id</dt>
              <dd class="mono">{w.id}</dd>
            </div>
          </dl>
          <div class="actions">
            <button
              type="button"
              disabled={test.busy !== undefined}
              onClick={() => void test.send(w, deliveries.refresh)}
            >
              {test.busy ? 'Sending…' : 'Send test event'}
            </button>
            <button type="button" class="danger" onClick={() => setDeleting(true)}>
              Delete endpoint
            </button>
          </div>
          <ErrorMessage error={test.error} />
        </>
      )}
      <h2>Deliveries</h2>
      <p class="muted">
        Newest first. A delivery is tried again with backoff until a 2xx answers or its retry window closes.
      </p>
      {deliveries.loading && deliveries.items.length === 0 && <Loading what="deliveries" />}
      <ErrorMessage error={deliveries.error} />
      <ErrorMessage error={redeliverError} />
      {!deliveries.loading && !deliveries.error && deliveries.items.length === 0 && (
        <p class="muted">Nothing sent yet. Send a test event to try the endpoint.</p>
      )}
      {deliveries.items.length > 0 && (
        <CardTable
          kind="deliveries"
          caption="Deliveries, newest first"
          columns={['Event', 'Status', 'Attempts', { label: 'Actions', hidden: true }]}
        >
          {deliveries.items.map((d) => (
            <tr key={d.id} data-delivery-id={d.id}>
              <th scope="row">
                <code>{d.event_type}</code>
                <span class="created">{formatDateTime(d.created_at)}</span>
                <span class="job-id">
                  <code>{d.id}</code>
                </span>
              </th>
              <td data-label="Status">
                <span class={`status ${d.status}`} data-field="delivery-status">
                  {DELIVERY_LABEL[d.status]}
                </span>
                {d.status === 'pending' && d.next_attempt_at && (
                  <span class="muted"> next attempt {formatDateTime(d.next_attempt_at)}</span>
                )}
              </td>
              <td data-label="Attempts">
                <Attempts delivery={d} />
              </td>
              <td class="row-actions">
                <button
                  type="button"
                  class="small"
                  disabled={redelivering === d.id}
                  onClick={() => void redeliver(d)}
                >
                  Redeliver<span class="visually-hidden"> {d.id}</span>
                </button>
              </td>
            </tr>
          ))}
        </CardTable>
      )}
      {deliveries.more && (
        <button type="button" onClick={deliveries.loadMore} disabled={deliveries.loading}>
          Older deliveries
        </button>
      )}
      {deleting && w && (
        <DeleteDialog
          webhook={w}
          onClose={() => setDeleting(false)}
          onDeleted={() => {
            location.hash = href.webhooks;
          }}
        />
      )}
    </>
  );
};
