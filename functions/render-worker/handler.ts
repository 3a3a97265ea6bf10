/**
 * The render queue consumer's Lambda: configured from its environment once, at cold start, with a
 * renderer of its own (Chromium from the layer, in this function: an async render may run for up
 * to its budget, longer than the renderer Lambda's sync budget allows).
 */
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { lambdaEnvironment, readRendererConfig } from '../core/config.js';
import { metrics } from '../core/metrics.js';
import { createRenderer } from '../renderer/renderer.js';
import { createRenderWorkerHandler } from './index.js';

const environment = lambdaEnvironment();
const renderer = createRenderer(readRendererConfig(environment), { spareSessions: 1 });
renderer.prewarm();
const consume = createRenderWorkerHandler(environment, { renderer });

export const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
  try {
    return await consume(event);
  } finally {
    metrics.publishStoredMetrics();
  }
};
