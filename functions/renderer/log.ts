/**
 * The renderer's log lines: the service's structured logger with `component: renderer`, and for
 * a render its job id. Events, ids and sizes only: never HTML, variable values or URLs a page
 * asked for.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { logger } from '../core/logger.js';

export const rendererLogger: Logger = logger.createChild({ persistentKeys: { component: 'renderer' } });

export type Level = 'INFO' | 'WARN' | 'ERROR';

export const log = (level: Level, event: string, detail: Record<string, unknown> = {}): void => {
  if (level === 'INFO') rendererLogger.info(event, detail);
  else if (level === 'WARN') rendererLogger.warn(event, detail);
  else rendererLogger.error(event, detail);
};

/** A render's logger: every line carries its job id. */
export const jobLogger = (jobId: string): Logger => rendererLogger.createChild({ persistentKeys: { jobId } });
