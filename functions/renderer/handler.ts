/**
 * The renderer Lambda. Invoked synchronously by the pdf function with a RenderRequest (a parsed
 * template, its variables, options and a presigned PUT URL); answers with a RenderResult (a failed
 * render is a result, not a Lambda error). The renderer (its browser and templating worker) is
 * made at cold start and kept at module scope, so it stays warm across invocations; its role has
 * no AWS permissions, the PDF leaves through the presigned PUT URL in the request.
 */

import { lambdaEnvironment, readRendererConfig } from '../core/config.js';
import { metrics } from '../core/metrics.js';
import type { RenderRun, RunResults } from '../domain/common/ports.js';
import type { RenderRequest, RenderResult } from './contract.js';
import { createRenderer } from './renderer.js';

// A render's context and page are opened before it arrives (see browser.ts); the first one, with
// the browser, during the function's init. The templating worker starts then too.
const renderer = createRenderer(readRendererConfig(lambdaEnvironment()), { spareSessions: 1 });
renderer.prewarm();

/** A render, or a batch run's items (`{ run }`, issue 43: one context, wiped between items). */
export const handler = async (
  event: RenderRequest | { readonly run: RenderRun },
): Promise<RenderResult | { readonly results: RunResults }> => {
  try {
    if ('run' in event) return { results: await renderer.renderRun(event.run) };
    return await renderer.render(event);
  } finally {
    // The render's metrics, as embedded-metric log lines: the role needs no more than its logs.
    metrics.publishStoredMetrics();
  }
};
