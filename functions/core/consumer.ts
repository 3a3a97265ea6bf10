/**
 * The one consumer middleware stack, the twin of the HTTP stack (http.ts): what every entry of the
 * consumer table (functions/consumers.ts) runs in, in the cloud and on the local stack alike.
 * Tracing, the logger's Lambda context and the metrics (a cold-start count among them) are
 * Powertools' middy middlewares; a queue consumer's batch goes through Powertools' batch utility
 * (partial batch failures: the records whose handling threw are named in `batchItemFailures`,
 * the rest are deleted), one record after another or side by side as its entry declares, each
 * record's body parsed once into the consumer's message before its handler sees it.
 *
 * A consumer's index.ts makes its part with `queueConsumer` or `scheduledConsumer`, which answer
 * the handler factory the local stack calls (`createHandler`) and the Lambda's entry (`handler`).
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import middy from '@middy/core';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { type ConsumerDeclaration, consumerWiring, type QueueSource } from '../consumers.js';
import { SERVICE_METRICS } from '../wiring.js';
import {
  type Environment,
  lambdaEnvironment,
  type ResourceConfig,
  readResourceConfig,
  runsInLambda,
} from './config.js';
import { logger } from './logger.js';
import { consumerMetrics, MetricUnit } from './metrics.js';
import { tracer } from './tracing.js';

/**
 * Thrown by a record's handler that has decided the message comes back (a retry after a backoff
 * it set itself): the record is a batch item failure, and not a fault to log.
 */
export class RetryMessage extends Error {
  constructor(readonly why: string) {
    super(`the message comes back: ${why}`);
    this.name = 'RetryMessage';
  }
}

/**
 * A MessageHandler's `parse` for a JSON body: the body when it parses and `is` accepts it, else
 * undefined (the record is acknowledged and logged).
 */
export const jsonMessage =
  <M>(is: (body: unknown) => body is M) =>
  (text: string): M | undefined => {
    try {
      const body: unknown = JSON.parse(text);
      return is(body) ? body : undefined;
    } catch {
      return undefined;
    }
  };

/** A queue consumer's own part: its message's parse and what it does with one. */
export interface MessageHandler<M> {
  /**
   * The record's body as the consumer's message, or undefined for a body no attempt could ever
   * process: that record is acknowledged (not left to poison the queue) and logged.
   */
  parse(body: string): M | undefined;
  /** How a body that is no message is logged. */
  readonly invalid: { readonly level: 'error' | 'warn'; readonly message: string };
  /** Throws for the record to come back (after its visibility timeout, or the delay it set). */
  handle(message: M, record: SQSRecord): Promise<void>;
  /**
   * The batch's valid messages at once, instead of `handle` one by one (the render worker's batch
   * runs, issue 43): each record's outcome in order, an error for one that comes back.
   */
  handleAll?(items: readonly { message: M; record: SQSRecord }[]): Promise<readonly (Error | undefined)[]>;
}

export type SqsHandler = (event: SQSEvent, context?: Context) => Promise<SQSBatchResponse>;
export type ScheduledHandler<R> = (event?: unknown, context?: Context) => Promise<R>;

/** What a consumer's index.ts exports: the factory the local stack calls, and the Lambda's entry. */
export interface ConsumerModule<H, P> {
  readonly createHandler: (env: Environment, parts?: P) => H;
  readonly handler: H;
}

/**
 * The Lambda's entry: made from its environment once, at cold start (in Lambda), as a route's is;
 * imported anywhere else (the local stack, tests) it is made on its first call only, so that
 * importing a consumer's module reads no environment.
 */
const lambdaEntry = <E, R>(make: () => (event: E, context?: Context) => Promise<R>) => {
  const made = { handler: runsInLambda() ? make() : undefined };
  return (event: E, context?: Context): Promise<R> => {
    made.handler ??= make();
    return made.handler(event, context);
  };
};

/** A context for a run without one (a test calling the handler as a function). */
const contextOf = (declaration: ConsumerDeclaration, context: Context | undefined): Context =>
  context ??
  ({
    callbackWaitsForEmptyEventLoop: false,
    functionName: declaration.name,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${declaration.name}`,
    memoryLimitInMB: String(declaration.memorySizeMiB),
    awsRequestId: crypto.randomUUID(),
    logGroupName: `/aws/lambda/${declaration.name}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => 60_000,
    done: () => {},
    fail: () => {},
    succeed: () => {},
  } as Context);

/**
 * Tracing, the logger's context and the metrics (with the cold start), around a consumer's run;
 * a run that completes counts one heartbeat (SERVICE_METRICS.consumerHeartbeat), which its
 * heartbeat alarm watches (lib/service-consumer.ts). A run that throws counts none: a consumer
 * that fails every run is as stopped as one that never runs.
 */
const withStack = <E, R>(
  declaration: ConsumerDeclaration,
  run: (event: E, context: Context, metrics: Metrics) => Promise<R>,
): ((event: E, context?: Context) => Promise<R>) => {
  const metrics = consumerMetrics(declaration.name);
  const chain = middy<E, R>();
  if (tracer) chain.use(captureLambdaHandler(tracer));
  chain.use(injectLambdaContext(logger)).use(logMetrics(metrics, { captureColdStartMetric: true }));
  const handler = chain.handler(async (event, context) => {
    const result = await run(event, context, metrics);
    metrics.addMetric(SERVICE_METRICS.consumerHeartbeat, MetricUnit.Count, 1);
    return result;
  });
  return (event, context) => handler(event, contextOf(declaration, context));
};

const queueSourceOf = (declaration: ConsumerDeclaration): QueueSource => {
  if (declaration.source.kind !== 'queue') {
    throw new Error(`${declaration.name} is not a queue consumer (functions/consumers.ts)`);
  }
  return declaration.source;
};

/** The SQS handler of a queue consumer: its message handler inside the consumer stack. */
export const sqsHandler = <M>(declaration: ConsumerDeclaration, messages: MessageHandler<M>): SqsHandler => {
  const { recordsInParallel } = queueSourceOf(declaration);
  const handleRecord = async (record: SQSRecord): Promise<void> => {
    const message = messages.parse(record.body);
    if (message === undefined) {
      logger[messages.invalid.level](messages.invalid.message, { messageId: record.messageId });
      return;
    }
    try {
      await messages.handle(message, record);
    } catch (e) {
      if (!(e instanceof RetryMessage))
        logger.error(`${declaration.name}: a message failed; it comes back`, { error: e as Error });
      throw e;
    }
  };
  /** A consumer that takes its batch at once: the records it fails come back, the rest are deleted. */
  const handleAll = async (event: SQSEvent, all: NonNullable<MessageHandler<M>['handleAll']>) => {
    const items: { message: M; record: SQSRecord }[] = [];
    for (const record of event.Records) {
      const message = messages.parse(record.body);
      if (message === undefined)
        logger[messages.invalid.level](messages.invalid.message, { messageId: record.messageId });
      else items.push({ message, record });
    }
    const outcomes = items.length === 0 ? [] : await all(items);
    const batchItemFailures = items.flatMap(({ record }, i) => {
      const error = outcomes[i];
      if (error === undefined) return [];
      if (!(error instanceof RetryMessage))
        logger.error(`${declaration.name}: a message failed; it comes back`, { error });
      return [{ itemIdentifier: record.messageId }];
    });
    return { batchItemFailures };
  };
  return withStack<SQSEvent, SQSBatchResponse>(declaration, async (event, context, metrics) => {
    if (messages.handleAll) {
      const response = await handleAll(event, messages.handleAll);
      metrics.addMetric('ConsumedMessages', MetricUnit.Count, event.Records.length);
      metrics.addMetric('RetriedMessages', MetricUnit.Count, response.batchItemFailures.length);
      return response;
    }
    // A processor per batch: it holds the batch's outcomes, and the local stack runs batches at once.
    const response = await processPartialResponse(event, handleRecord, new BatchProcessor(EventType.SQS), {
      context,
      processInParallel: recordsInParallel,
      // Every record failed: answered as such (each comes back), not thrown as the invocation's error.
      throwOnFullBatchFailure: false,
    });
    metrics.addMetric('ConsumedMessages', MetricUnit.Count, event.Records.length);
    metrics.addMetric('RetriedMessages', MetricUnit.Count, response.batchItemFailures.length);
    return response;
  });
};

/**
 * A queue consumer's module: `build` makes its message handler from its configuration (exactly
 * the bindings its entry declares) and the parts the local stack hands in.
 */
export const queueConsumer = <M, P = Record<string, never>>(
  declaration: ConsumerDeclaration,
  build: (config: ResourceConfig, parts: P) => MessageHandler<M>,
): ConsumerModule<SqsHandler, P> => {
  const createHandler = (env: Environment, parts: P = {} as P): SqsHandler =>
    sqsHandler(declaration, build(readResourceConfig(consumerWiring(declaration), env), parts));
  return { createHandler, handler: lambdaEntry(() => createHandler(lambdaEnvironment())) };
};

/** A scheduled consumer's module: `build` makes its one run. */
export const scheduledConsumer = <R, P = Record<string, never>>(
  declaration: ConsumerDeclaration,
  build: (config: ResourceConfig, parts: P) => (event: unknown) => Promise<R>,
): ConsumerModule<ScheduledHandler<R>, P> => {
  if (declaration.source.kind !== 'schedule') {
    throw new Error(`${declaration.name} is not a scheduled consumer (functions/consumers.ts)`);
  }
  const createHandler = (env: Environment, parts: P = {} as P): ScheduledHandler<R> => {
    const run = build(readResourceConfig(consumerWiring(declaration), env), parts);
    return withStack<unknown, R>(declaration, (event) => run(event));
  };
  return { createHandler, handler: lambdaEntry(() => createHandler(lambdaEnvironment())) };
};
