/**
 * The documentation site (VitePress): docs/ as it is on GitHub, built by `npm run docs:build` into
 * docs/.vitepress/dist, served by `npm run docs` while writing and by `npm start` at /docs/.
 * A link to a page that does not exist fails the build; anchors and links out of docs/ are
 * checked by test/unit/doc-links.test.ts.
 */
import { defineConfig } from 'vitepress';

export default defineConfig({
  title: 'PDF rendering service',
  description: 'HTML+CSS in, PDF out: serverless on AWS, and on one machine with npm start',
  base: '/docs/',
  // Nothing fetched from elsewhere: the site works offline, as npm start does.
  head: [],
  lastUpdated: false,
  ignoreDeadLinks: [
    // Files of the repository outside the site (docs/ as GitHub shows it links to them).
    /\/templates\/e-invoice$/,
    /\/vendor\/(factur-x-1\.09|xrechnung-schematron-2\.5\.0)\/README$/,
    /\/clients\/(typescript|python)\/README$/,
    // The local stack's and the dev server's own addresses.
    /^https?:\/\/(localhost|127\.0\.0\.1)[:/]/,
  ],
  themeConfig: {
    search: { provider: 'local' },
    outline: [2, 3],
    nav: [
      { text: 'Getting started', link: '/getting-started' },
      { text: 'API', link: '/api/' },
      { text: 'Deploy', link: '/deploy' },
    ],
    sidebar: [
      {
        text: 'Start',
        items: [
          { text: 'Overview', link: '/' },
          { text: 'Getting started', link: '/getting-started' },
        ],
      },
      {
        text: 'API guide',
        items: [
          { text: 'Overview', link: '/api/' },
          { text: 'Rendering', link: '/api/pdf' },
          { text: 'Jobs', link: '/api/jobs' },
          { text: 'Batches', link: '/api/batches' },
          { text: 'Merges', link: '/api/merges' },
          { text: 'Templates', link: '/api/templates' },
          { text: 'Previews', link: '/api/previews' },
          { text: 'Assets', link: '/api/assets' },
          { text: 'API keys', link: '/api/api-keys' },
          { text: 'Destinations', link: '/api/destinations' },
          { text: 'Account and usage', link: '/api/account' },
          { text: 'Errors', link: '/api/errors' },
        ],
      },
      {
        text: 'Guides',
        items: [
          { text: 'Templating', link: '/templating' },
          { text: 'Webhooks', link: '/webhooks' },
          { text: 'Dashboard', link: '/dashboard' },
          { text: 'Fonts', link: '/fonts' },
        ],
      },
      {
        text: 'Running it',
        items: [
          { text: 'Configuration and limits', link: '/configuration' },
          { text: 'Memory and document size', link: '/memory' },
          { text: 'Data retention', link: '/data-retention' },
          { text: 'Operations', link: '/operations' },
          { text: 'Billing', link: '/billing' },
          { text: 'Runbook', link: '/runbook' },
          { text: 'Deploying to AWS', link: '/deploy' },
          { text: 'Security', link: '/security' },
          { text: 'Speed and cost', link: '/benchmarks' },
          { text: 'Batch runs', link: '/batch-runs' },
        ],
      },
      {
        text: 'Project',
        items: [
          { text: 'Contributing', link: '/contributing' },
          { text: 'Specification', link: '/service-spec' },
          { text: 'Contract', link: '/contract' },
        ],
      },
    ],
  },
});
