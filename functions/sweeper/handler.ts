/** The sweeper Lambda's entry point: configured from its environment once, at cold start. */
import { lambdaEnvironment } from '../core/config.js';
import { createSweepHandler } from './index.js';

export const handler = createSweepHandler(lambdaEnvironment());
