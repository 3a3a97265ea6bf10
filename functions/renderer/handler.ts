/**
 * The renderer Lambda. Invoked synchronously by the pdf function with a RenderRequest (a parsed
 * template, its variables, options and a presigned PUT URL); answers with a RenderResult (a failed
 * render is a result, not a Lambda error). The browser and the templating worker live at module
 * scope (browser.ts, templating-pool.ts) and stay warm across invocations; its role has no AWS
 * permissions, the PDF leaves through the presigned PUT URL in the request.
 */

import { metrics } from '../core/metrics.js';
import { prewarm, setSpareSessions } from './browser.js';
import type { RenderRequest, RenderResult } from './contract.js';
import { render } from './render.js';
import { templatingPool } from './templating-pool.js';

// A render's context and page are opened before it arrives (see browser.ts); the first one, with
// the browser, during the function's init. The templating worker starts then too.
setSpareSessions(1);
prewarm();
templatingPool.prewarm();

export const handler = async (event: RenderRequest): Promise<RenderResult> => {
  try {
    return await render(event);
  } finally {
    // The render's metrics, as embedded-metric log lines: the role needs no more than its logs.
    metrics.publishStoredMetrics();
  }
};
