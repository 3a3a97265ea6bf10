/**
 * The renderer's log lines: the service's structured logger with `component: renderer`, and for
 * a render its job id. Events, ids and sizes only: never HTML, variable values or URLs a page
 * asked for.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { logger } from '../core/logger.js';
import { countWith, MetricUnit, metrics } from '../core/metrics.js';
import type { RenderResult } from './contract.js';

export const rendererLogger: Logger = logger.createChild({ persistentKeys: { component: 'renderer' } });

export type Level = 'INFO' | 'WARN' | 'ERROR';

export const log = (level: Level, event: string, detail: Record<string, unknown> = {}): void => {
  if (level === 'INFO') rendererLogger.info(event, detail);
  else if (level === 'WARN') rendererLogger.warn(event, detail);
  else rendererLogger.error(event, detail);
};

/** A render's logger: every line carries its job id. */
export const jobLogger = (jobId: string): Logger => rendererLogger.createChild({ persistentKeys: { jobId } });

/** `error`, not `message`: the logger keeps `message` for the event and drops a second one. */
export const describeError = (e: unknown): Record<string, string> =>
  e instanceof Error ? { name: e.name, error: e.message } : { error: String(e) };

/** Counts the render's outcome and times in the metrics, and logs a failure with its code. */
export const observe = (
  result: RenderResult,
  templatingMs: number | undefined,
  log: Logger,
): RenderResult => {
  countWith('Renders', { Outcome: result.ok ? 'completed' : 'failed' });
  if (templatingMs !== undefined)
    metrics.addMetric('TemplatingDuration', MetricUnit.Milliseconds, templatingMs);
  if (result.ok) {
    metrics.addMetric('RenderDuration', MetricUnit.Milliseconds, result.renderDurationMs);
    metrics.addMetric('PdfBytes', MetricUnit.Bytes, result.fileSizeBytes);
  } else {
    countWith('RenderFailures', { ErrorCode: result.code });
    log.info('render-failed', { code: result.code });
  }
  return result;
};
