/**
 * The dashboard's entry: reads config.json (written by the stack, or served by `npm start`),
 * finishes a sign-in when the provider has just sent the user back, and shows the app.
 */
import './styles.css';
import { type ComponentChild, render } from 'preact';
import type { DashboardConfig } from '../config.js';
import { App } from './app.js';
import { createSession } from './session.js';

const root = document.getElementById('app') as HTMLElement;
/** Preact keeps markup it did not render: the "Loading" line goes first. */
const show = (node: ComponentChild) => {
  root.replaceChildren();
  render(node, root);
};

const loadConfig = async (): Promise<DashboardConfig> => {
  const res = await fetch(new URL('config.json', new URL('./', location.href)), { cache: 'no-store' });
  if (!res.ok) throw new Error(`config.json answered ${res.status}`);
  return (await res.json()) as DashboardConfig;
};

const start = async () => {
  const config = await loadConfig();
  const session = await createSession(config);
  show(<App config={config} session={session} />);
};

start().catch((e: unknown) => {
  show(
    <main class="sign-in">
      <h1>The dashboard could not start</h1>
      <p role="alert">{e instanceof Error ? e.message : String(e)}</p>
    </main>,
  );
});
