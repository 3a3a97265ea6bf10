/**
 * The pages for work that finishes later (batches, webhook endpoints and their deliveries), the
 * account's assets (issue 40), its destinations and the merge of jobs picked on the Jobs page
 * (issue 36), its usage (issue 39: its plan's overage and charges) and the template editor's
 * finishing options (issue 34: watermark, stamp, signature): one
 * chunk that the page loads when one of them opens (app.tsx), so that the JavaScript every visit
 * loads first stays within its budget (test/unit/dashboard-build.test.ts).
 */
export { AssetsPage } from './assets.js';
export { BatchesPage, BatchPage } from './batches.js';
export { DestinationsPage } from './destinations.js';
export { FinishingOptions } from './finishing-options.js';
export { MergeSelected } from './merge-selected.js';
export { UsagePage } from './usage.js';
export { WebhookPage, WebhooksPage } from './webhooks.js';
