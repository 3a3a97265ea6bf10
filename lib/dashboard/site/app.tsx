/** The page shell: sign-in screen or the signed-in layout (navigation, account, the current page). */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { DashboardConfig } from '../config.js';
import { createApiClient } from './api.js';
import { ErrorMessage, Loading } from './components.js';
import { Dashboard } from './context.js';
import { JobsPage } from './pages/jobs.js';
import { KeysPage } from './pages/keys.js';
import { TemplateEditorPage } from './pages/template-editor.js';
import { TemplatesPage } from './pages/templates.js';
import { href, parseRoute, type Route } from './routes.js';
import type { Session } from './session.js';

const NAV: readonly { readonly label: string; readonly href: string; readonly pages: Route['page'][] }[] = [
  { label: 'API keys', href: href.keys, pages: ['keys'] },
  { label: 'Templates', href: href.templates, pages: ['templates', 'template'] },
  { label: 'Jobs', href: href.jobs, pages: ['jobs'] },
  { label: 'Batches', href: href.batches, pages: ['batches', 'batch'] },
  { label: 'Assets', href: href.assets, pages: ['assets'] },
  { label: 'Webhooks', href: href.webhooks, pages: ['webhooks', 'webhook'] },
  { label: 'Destinations', href: href.destinations, pages: ['destinations'] },
  { label: 'Usage', href: href.usage, pages: ['usage'] },
];

const useRoute = (): Route => {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return route;
};

const SignIn = ({
  config,
  session,
  notice,
}: {
  config: DashboardConfig;
  session: Session;
  notice?: string;
}) => {
  const [busy, setBusy] = useState(false);
  return (
    <main class="sign-in" id="main">
      <h1>PDF service dashboard</h1>
      <p>Create API keys, write templates with a live PDF preview, and follow your renders and usage.</p>
      {notice && (
        <p class="notice" role="alert">
          {notice}
        </p>
      )}
      <button
        type="button"
        class="primary"
        disabled={busy}
        onClick={() => {
          setBusy(true);
          session.signIn(location.hash).catch(() => setBusy(false));
        }}
      >
        {busy ? 'Opening sign-in…' : 'Sign in'}
      </button>
      {config.environment === 'local' && (
        <p class="muted">
          Running locally (<code>npm start</code>): sign in with any email address; each address is an account
          of its own.
        </p>
      )}
    </main>
  );
};

type LaterPages = typeof import('./pages/later.js');
type LaterRoute = Extract<
  Route,
  { page: 'batches' | 'batch' | 'webhooks' | 'webhook' | 'assets' | 'usage' | 'destinations' }
>;

/** The batches, webhooks, assets and usage pages, loaded the first time one opens (pages/later.ts). */
const LaterPage = ({ route }: { route: LaterRoute }) => {
  const [state, setState] = useState<{ pages?: LaterPages; error?: unknown }>({});
  useEffect(() => {
    import('./pages/later.js').then(
      (pages) => setState({ pages }),
      (error: unknown) => setState({ error }),
    );
  }, []);
  const { pages, error } = state;
  if (!pages) return error ? <ErrorMessage error={error} /> : <Loading what="the page" />;
  switch (route.page) {
    case 'batches':
      return <pages.BatchesPage />;
    case 'batch':
      return <pages.BatchPage key={route.id} id={route.id} />;
    case 'webhooks':
      return <pages.WebhooksPage />;
    case 'webhook':
      return <pages.WebhookPage key={route.id} id={route.id} />;
    case 'assets':
      return <pages.AssetsPage />;
    case 'usage':
      return <pages.UsagePage />;
    case 'destinations':
      return <pages.DestinationsPage />;
  }
};

const Page = ({ route }: { route: Route }) => {
  switch (route.page) {
    case 'keys':
      return <KeysPage />;
    case 'templates':
      return <TemplatesPage />;
    case 'template':
      return <TemplateEditorPage key={route.id ?? 'new'} id={route.id} />;
    case 'jobs':
      return <JobsPage />;
    case 'batches':
    case 'batch':
    case 'webhooks':
    case 'webhook':
      // Kept mounted from one of these pages to the next: the chunk is asked for once per visit.
      return <LaterPage route={route} />;
    case 'usage':
    case 'assets':
    case 'destinations':
      return <LaterPage route={route} />;
  }
};

export const App = ({ config, session }: { config: DashboardConfig; session: Session }) => {
  const [state, setState] = useState(session.state());
  useEffect(() => session.subscribe(setState), [session]);
  const route = useRoute();
  const main = useRef<HTMLElement>(null);
  const api = useMemo(
    () =>
      createApiClient(
        config.apiUrl,
        () => session.idToken(),
        (message) => session.end(message),
      ),
    [config, session],
  );
  const user = state.user;
  if (!user) return <SignIn config={config} session={session} notice={state.notice} />;
  const email = typeof user.profile.email === 'string' ? user.profile.email : user.profile.sub;
  return (
    <Dashboard.Provider
      value={{ api, accountId: user.profile.sub, config, apiUrl: new URL(config.apiUrl, location.href).href }}
    >
      <button type="button" class="skip-link" onClick={() => main.current?.focus()}>
        Skip to content
      </button>
      <header class="top">
        <p class="brand">PDF service</p>
        <nav aria-label="Dashboard">
          <ul>
            {NAV.map((item) => (
              <li key={item.href}>
                <a href={item.href} aria-current={item.pages.includes(route.page) ? 'page' : undefined}>
                  {item.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="account">
          <span class="email" title={email}>
            {email}
          </span>
          <button type="button" onClick={() => void session.signOut()}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" ref={main} tabIndex={-1}>
        <Page route={route} />
      </main>
      <footer class="site-footer">
        {/* Its own page: the viewer is loaded there only, and the dashboard's code stays small. */}
        <a href="reference.html">API reference</a>
        <a href={new URL('openapi.json', new URL(config.apiUrl, location.href)).href}>OpenAPI document</a>
      </footer>
    </Dashboard.Provider>
  );
};
