/**
 * Plumbing every function shares: the system clock and the fault log. What a function builds from
 * its configuration (clients, stores, use cases) is built once, in the composition root
 * (functions/services.ts).
 */

import { clientOptions } from '../adapters/client-options.js';
import type { Clock } from '../domain/ports.js';
import type { AwsConfig } from './config.js';
import { logger } from './logger.js';

export const systemClock: Clock = { now: () => new Date() };

/** Logs a fault that is answered as something else (a failed job, a skipped bookkeeping write). */
export const logFault = (message: string, error: unknown): void =>
  logger.error(message, { error: error as Error });

/** Kept here for core/renderer-client.ts, which builds the renderer's Lambda client. */
export const createLambdaClientOptions = (aws: AwsConfig) => clientOptions(aws, aws.lambdaEndpoint);
