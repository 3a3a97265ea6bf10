/**
 * The renderer Lambda. Invoked synchronously by the pdf function with a finished RenderRequest;
 * answers with a RenderResult (a failed render is a result, not a Lambda error). The browser
 * lives at module scope (browser.ts) and stays warm across invocations; its role has no AWS
 * permissions, the PDF leaves through the presigned PUT URL in the request.
 */
import { prewarm, setSpareSessions } from './browser.js';
import type { RenderRequest, RenderResult } from './contract.js';
import { render } from './render.js';

// A render's context and page are opened before it arrives (see browser.ts); the first one, with
// the browser, during the function's init.
setSpareSessions(1);
prewarm();

export const handler = async (event: RenderRequest): Promise<RenderResult> => render(event);
