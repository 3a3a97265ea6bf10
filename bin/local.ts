/**
 * `npm start`: the whole service on this machine (see lib/local/stack.ts), run from its bundle
 * (bin/start.mjs); `npx tsx bin/local.ts` runs it from source.
 * Options come from the environment: PORT (3000) and DATA_DIR (.data/); the handlers read their
 * own settings (PLANS, RENDER_BUDGET_MS, CHROME_EXECUTABLE_PATH, limits) from it as well.
 */
import { readLocalOptions, readServiceEnvironment } from '../lib/local/options.js';
import type { LocalStack } from '../lib/local/stack.js';

const fail = (message: string): never => {
  process.stderr.write(`local stack: ${message}\n`);
  process.exit(1);
};

const main = async (): Promise<void> => {
  let options: ReturnType<typeof readLocalOptions>;
  try {
    options = readLocalOptions();
  } catch (e) {
    return fail((e as Error).message);
  }

  const started = performance.now();
  let stack: LocalStack;
  try {
    // Chromium launches (and proves its process model, and opens the first spare page) while the
    // rest of the stack loads: its modules are some 0.3 s of this process's CPU from npm start's
    // bundle (1.5 s through tsx), which used to come first. A stack that then fails to start exits, and Chromium with it.
    const { startLocalRenderer } = await import('../lib/local/local-renderer.js');
    const startedRenderer = startLocalRenderer(readServiceEnvironment(), options.rendererSpareSessions);
    const { startLocalStack } = await import('../lib/local/stack.js');
    stack = await startLocalStack({
      startedRenderer,
      port: options.port,
      dataDir: options.dataDir,
      corsAllowedOrigins: options.corsAllowedOrigins,
      rendererSpareSessions: options.rendererSpareSessions,
    });
  } catch (e) {
    return fail((e as Error).message);
  }

  const dataDirPrefix = process.env.DATA_DIR?.trim()
    ? `DATA_DIR=${JSON.stringify(process.env.DATA_DIR.trim())} `
    : '';
  const body = JSON.stringify({ html: '<h1>Hello {{ name }}</h1>', variables: { name: 'World' } });
  process.stdout.write(
    `PDF service listening on ${stack.baseUrl} (data in ${stack.dataDir}, started in ${Math.round(performance.now() - started)} ms)\n`,
  );
  process.stdout.write(`Dashboard: ${stack.dashboardUrl} (local sign-in: any email address)\n`);
  process.stdout.write(
    `Try: TOKEN=$(${dataDirPrefix}npm run --silent token -- --sub user-1 --email user-1@example.com) && ` +
      `curl -sS -X POST ${stack.baseUrl}/v1/pdf -H "Authorization: Bearer $TOKEN" ` +
      `-H 'Content-Type: application/json' -d '${body}'\n`,
  );

  // One Ctrl-C often arrives more than once: the terminal signals the whole process group and npm
  // forwards the signal to its script again. The first starts the drain (no new connections, idle
  // keep-alive ones closed, requests in flight answered, then the rest stopped); a second is taken
  // for that echo; a third means the user will not wait.
  let signals = 0;
  const stop = (signal: NodeJS.Signals) => {
    signals += 1;
    if (signals === 1) {
      process.stderr.write(`local stack: ${signal}, finishing the requests in flight and shutting down\n`);
      stack.close().then(
        () => process.exit(0),
        (e: unknown) => fail(`shutdown failed: ${(e as Error).message}`),
      );
    } else if (signals >= 3) {
      process.stderr.write(`local stack: ${signal} again, exiting without waiting for requests in flight\n`);
      process.exit(130);
    }
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
};

await main();
