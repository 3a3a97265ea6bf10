/**
 * The render queue consumer's Lambda: configured from its environment once, at cold start. It
 * renders nothing itself: the async renderer Lambda (RENDERER_FUNCTION_NAME) does, invoked as the
 * pdf function invokes the sync renderer, so that no stranger's page runs beside this function's
 * table and bucket permissions.
 */
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { lambdaEnvironment } from '../core/config.js';
import { metrics } from '../core/metrics.js';
import { createRenderWorkerHandler } from './index.js';

const consume = createRenderWorkerHandler(lambdaEnvironment(), {});

export const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
  try {
    return await consume(event);
  } finally {
    metrics.publishStoredMetrics();
  }
};
