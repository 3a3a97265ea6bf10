/** The destinations Lambda's entry point: configured from its environment once, at cold start. */
import { lambdaEnvironment } from '../core/config.js';
import { createHandler } from './index.js';

export const handler = createHandler(lambdaEnvironment());
