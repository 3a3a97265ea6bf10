/**
 * Metrics in CloudWatch's embedded metric format (Powertools Metrics): written as log lines, so
 * they need no permission beyond writing logs, and the renderer can publish its own. Namespace
 * PdfRenderService. POWERTOOLS_DEV=true (local) or POWERTOOLS_METRICS_DISABLED=true turns them off.
 */
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { SERVICE_METRICS } from '../wiring.js';
import { SERVICE_NAME } from './logger.js';

export { MetricUnit };

export const metrics = new Metrics({ namespace: SERVICE_METRICS.namespace, serviceName: SERVICE_NAME });

/**
 * A consumer's own metrics (functions/core/consumer.ts), with its name as a dimension of each: its
 * own object, so that the local stack's consumers running at once in one process share no state.
 */
export const consumerMetrics = (consumer: string): Metrics =>
  new Metrics({
    namespace: SERVICE_METRICS.namespace,
    serviceName: SERVICE_NAME,
    defaultDimensions: { [SERVICE_METRICS.consumerDimension]: consumer },
  });

/** One count of `name` with its own dimensions (so that, e.g., an error code does not tag the rest). */
export const countWith = (name: string, dimensions: Readonly<Record<string, string>>): void => {
  const single = metrics.singleMetric();
  for (const [key, value] of Object.entries(dimensions)) single.addDimension(key, value);
  single.addMetric(name, MetricUnit.Count, 1);
};
