/** The routes the snippets call: data the build gives the page (lib/dashboard/api-routes.ts). */
import type { SnippetRoutes } from './snippets.js';

declare const __API_ROUTES__: SnippetRoutes;

export const apiRoutes: SnippetRoutes = __API_ROUTES__;
