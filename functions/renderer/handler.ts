/**
 * The renderer Lambda. Invoked synchronously by the pdf function with a finished RenderRequest;
 * answers with a RenderResult (a failed render is a result, not a Lambda error). The browser
 * lives at module scope (browser.ts) and stays warm across invocations; its role has no AWS
 * permissions, the PDF leaves through the presigned PUT URL in the request.
 */
import type { RenderRequest, RenderResult } from './contract.js';
import { render } from './render.js';

export const handler = async (event: RenderRequest): Promise<RenderResult> => render(event);
