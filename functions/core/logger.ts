/**
 * One structured logger per process (Powertools Logger: JSON lines with the Lambda context; set
 * POWERTOOLS_DEV=true for indented, readable lines, as `npm start` does). Never give it tokens,
 * keys, Authorization headers, HTML or variable values: log codes, ids and sizes.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { SERVICE_METRICS } from '../wiring.js';

export const SERVICE_NAME = SERVICE_METRICS.service;

export const logger = new Logger({ serviceName: SERVICE_NAME });
