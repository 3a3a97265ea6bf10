// Starts parse-worker.ts from TypeScript source (vitest, tsx): a worker thread gets neither
// tsx's loader nor vite's transforms from its parent, so tsx is registered here first. The API
// functions' bundles start their prebuilt parse-worker.cjs instead.
import { register } from 'tsx/esm/api';

register();
await import(new URL('./parse-worker.ts', import.meta.url).href);
