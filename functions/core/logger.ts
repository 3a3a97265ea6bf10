import { Logger } from '@aws-lambda-powertools/logger';

/** One structured logger per process. Never give it tokens, keys or Authorization headers. */
export const logger = new Logger({ serviceName: 'pdf-render-service' });
