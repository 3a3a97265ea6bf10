/** The fallback Lambda's entry point. */
import { createHandler } from './index.js';

export const handler = createHandler();
