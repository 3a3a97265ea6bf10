/** The webhook sender Lambda's entry point: configured from its environment once, at cold start. */
import { lambdaEnvironment } from '../core/config.js';
import { createWebhookSenderHandler } from './index.js';

export const handler = createWebhookSenderHandler(lambdaEnvironment());
