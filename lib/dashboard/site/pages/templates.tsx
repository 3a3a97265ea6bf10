/** Templates: the account's own, and every account's public ones. */
import { useState } from 'preact/hooks';
import type { Template } from '../api.js';
import { CardTable, ErrorMessage, Loading, PageHeading } from '../components.js';
import { useDashboard } from '../context.js';
import { formatDateTime } from '../format.js';
import { href } from '../routes.js';
import { usePages } from './paging.js';
import { StarterGallery } from './starters.js';

const TemplateTable = ({
  caption,
  templates,
  own,
}: {
  caption: string;
  templates: readonly Template[];
  own: boolean;
}) => {
  const { accountId } = useDashboard();
  return (
    <CardTable caption={caption} columns={['Name', 'Version', own ? 'Visibility' : 'Owner', 'Updated']}>
      {templates.map((t) => (
        <tr key={t.id}>
          <th scope="row">
            <a href={href.template(t.id)}>{t.name}</a>
          </th>
          <td data-label="Version">v{t.version}</td>
          <td data-label={own ? 'Visibility' : 'Owner'}>
            {own
              ? t.is_public
                ? 'Public'
                : 'Private'
              : t.owner_user_id === accountId
                ? 'You'
                : 'Another account'}
          </td>
          <td data-label="Updated">{formatDateTime(t.updated_at)}</td>
        </tr>
      ))}
    </CardTable>
  );
};

const TemplateList = ({ path, own, title }: { path: string; own: boolean; title: string }) => {
  const { api } = useDashboard();
  const list = usePages<Template>(
    (limit, offset) => api.request(`${path}?limit=${limit}&offset=${offset}`),
    // The API ends a page early before its answer passes 5 MiB; a page that big may have a next one.
    (page) => page.reduce((n, t) => n + t.html.length, 0) > 4 * 1024 * 1024,
  );
  const id = own ? 'own-templates' : 'public-templates';
  return (
    <section aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {list.loading && list.items.length === 0 && <Loading what="templates" />}
      <ErrorMessage error={list.error} />
      {!list.loading && !list.error && list.items.length === 0 && !own && (
        <p class="muted">No public templates yet.</p>
      )}
      {!list.loading && !list.error && list.items.length === 0 && own && (
        <>
          <p data-field="empty-templates">
            No templates yet. Pick a starter below (an invoice, a receipt, a report…): it is copied into your
            templates with its sample data, ready to preview and edit. Or write your own with{' '}
            <a href={href.newTemplate}>New template</a>.
          </p>
          <StarterGallery />
        </>
      )}
      {list.items.length > 0 && <TemplateTable caption={title} templates={list.items} own={own} />}
      {list.more && (
        <button type="button" onClick={list.loadMore} disabled={list.loading}>
          More {own ? 'of your templates' : 'public templates'}
        </button>
      )}
    </section>
  );
};

export const TemplatesPage = () => {
  const [tab, setTab] = useState<'own' | 'public'>('own');
  const [gallery, setGallery] = useState(false);
  return (
    <>
      <PageHeading>Templates</PageHeading>
      <p class="lead">
        Jinja2 templates you render by id. Public templates can be read and rendered by every account.
      </p>
      <p>
        <a class="button primary" href={href.newTemplate}>
          New template
        </a>{' '}
        <button type="button" aria-expanded={gallery} onClick={() => setGallery(!gallery)}>
          New from starter
        </button>
      </p>
      {gallery && <StarterGallery />}
      <fieldset class="segmented">
        <legend class="visually-hidden">Which templates</legend>
        <label>
          <input type="radio" name="template-list" checked={tab === 'own'} onChange={() => setTab('own')} />
          Yours
        </label>
        <label>
          <input
            type="radio"
            name="template-list"
            checked={tab === 'public'}
            onChange={() => setTab('public')}
          />
          Public
        </label>
      </fieldset>
      {tab === 'own' ? (
        <TemplateList key="own" path="v1/templates" own title="Your templates" />
      ) : (
        <TemplateList key="public" path="v1/templates/public" own={false} title="Public templates" />
      )}
    </>
  );
};
