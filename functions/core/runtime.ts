/**
 * Plumbing every function shares: the system clock and the fault log. What a function builds from
 * its configuration (clients, stores, use cases) is built once, in the composition root
 * (functions/services.ts).
 */

import type { Clock } from '../domain/common/ports.js';
import { logger } from './logger.js';

export const systemClock: Clock = { now: () => new Date() };

/** Logs a fault that is answered as something else (a failed job, a skipped bookkeeping write). */
export const logFault = (message: string, error: unknown): void =>
  logger.error(message, { error: error as Error });
