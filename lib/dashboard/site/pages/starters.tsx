/**
 * The starter templates (issue 40): the service's own public templates (GET
 * /v1/templates/public?starters=true), each with its thumbnail (starters/<slug>.png). "Use this
 * starter" saves a copy as the account's own template, with the starter's sample data and
 * options, and opens it in the editor.
 */
import { useState } from 'preact/hooks';
import type { Template } from '../api.js';
import { ErrorMessage, Loading, useAsync } from '../components.js';
import { useDashboard } from '../context.js';
import { JsonText } from '../json-text.js';
import { href } from '../routes.js';

const slugOf = (name: string): string =>
  name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

export const StarterGallery = () => {
  const { api } = useDashboard();
  const starters = useAsync(
    () => api.requestWithText<Template[]>('v1/templates/public?starters=true&limit=100'),
    [api],
  );
  const [using, setUsing] = useState<string | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const use = async (starter: Template) => {
    setUsing(starter.id);
    setError(undefined);
    try {
      const created = await api.request<Template>('v1/templates', {
        method: 'POST',
        body: {
          name: starter.name,
          html: starter.html,
          header_html: starter.header_html,
          footer_html: starter.footer_html,
          sample_variables:
            starter.sample_variables === null ? null : new JsonText(JSON.stringify(starter.sample_variables)),
          pdf_options: starter.pdf_options,
        },
      });
      location.hash = href.template(created.id);
    } catch (e) {
      setError(e);
      setUsing(undefined);
    }
  };
  const list = starters.data?.value;
  return (
    <section aria-labelledby="starters-title" class="starters">
      <h2 id="starters-title">Start from a starter</h2>
      {starters.loading && !list && <Loading what="starters" />}
      <ErrorMessage error={starters.error ?? error} />
      {list && (
        <ul class="starter-grid">
          {list.map((t) => (
            <li key={t.id} class="starter-card">
              <img
                src={`starters/${slugOf(t.name)}.png`}
                alt={`The first page of the ${t.name} starter`}
                loading="lazy"
              />
              <div>
                <strong>{t.name}</strong>
                <button
                  type="button"
                  class="primary small"
                  onClick={() => use(t)}
                  disabled={using !== undefined}
                >
                  {using === t.id ? 'Copying…' : 'Use this starter'}
                  <span class="visually-hidden"> {t.name}</span>
                </button>
              </div>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
};
