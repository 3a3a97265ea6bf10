/**
 * Pages are addressed by the URL's fragment (`#/keys`, `#/templates/tpl_…`): the site is static
 * files, served from any path (`/` in the cloud, `/dashboard/` locally), with no server-side routes.
 */
export type Route =
  | { readonly page: 'keys' }
  | { readonly page: 'templates' }
  | { readonly page: 'template'; readonly id: string | undefined }
  | { readonly page: 'jobs' }
  | { readonly page: 'batches' }
  | { readonly page: 'batch'; readonly id: string }
  | { readonly page: 'webhooks' }
  | { readonly page: 'webhook'; readonly id: string }
  | { readonly page: 'assets' }
  | { readonly page: 'usage' }
  | { readonly page: 'destinations' };

export const parseRoute = (hash: string): Route => {
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  switch (parts[0]) {
    case 'templates':
      if (parts[1] === 'new') return { page: 'template', id: undefined };
      return parts[1] ? { page: 'template', id: parts[1] } : { page: 'templates' };
    case 'jobs':
      return { page: 'jobs' };
    case 'batches':
      return parts[1] ? { page: 'batch', id: parts[1] } : { page: 'batches' };
    case 'webhooks':
      return parts[1] ? { page: 'webhook', id: parts[1] } : { page: 'webhooks' };
    case 'usage':
      return { page: 'usage' };
    case 'assets':
      return { page: 'assets' };
    case 'destinations':
      return { page: 'destinations' };
    default:
      return { page: 'keys' };
  }
};

export const href = {
  keys: '#/keys',
  templates: '#/templates',
  newTemplate: '#/templates/new',
  template: (id: string) => `#/templates/${encodeURIComponent(id)}`,
  jobs: '#/jobs',
  batches: '#/batches',
  batch: (id: string) => `#/batches/${encodeURIComponent(id)}`,
  webhooks: '#/webhooks',
  webhook: (id: string) => `#/webhooks/${encodeURIComponent(id)}`,
  usage: '#/usage',
  assets: '#/assets',
  destinations: '#/destinations',
} as const;
