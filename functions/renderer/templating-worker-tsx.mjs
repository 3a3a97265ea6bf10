// Starts templating-worker.ts from TypeScript source (vitest, tsx): a worker thread gets
// neither tsx's loader nor vite's transforms from its parent, so tsx is registered here first.
// The renderer Lambda's bundle starts its prebuilt templating-worker.cjs instead.
import { register } from 'tsx/esm/api';

register();
await import(new URL('./templating-worker.ts', import.meta.url).href);
