/**
 * The local stack's half of the consumer table (functions/consumers.ts, functions/queues.ts): each
 * queue made on the local SQS server as the cloud's is (its visibility timeout, redrive count and
 * dead-letter queue from its entry), and each consumer started as its entry says: a queue's with
 * the local event source mapping (sqs/poller.ts: its batch size, its concurrency), a schedule's
 * with a timer. Each runs the handler its folder's index.ts makes (`createHandler`, the factory
 * the cloud's Lambda entry uses too) with the environment its bindings give it, as its Lambda has.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { ConsumerDeclaration, QueueSource, ScheduleSource } from '../../functions/consumers.js';
import { consumerOf, consumerWiring, LOCAL_START_EVENT } from '../../functions/consumers.js';
import type { ConsumerModule, ScheduledHandler, SqsHandler } from '../../functions/core/consumer.js';
import type { LookupAll } from '../../functions/core/public-addresses.js';
import type { UsageEventBus } from '../../functions/domain/accounts/usage-events.js';
import type { Renderer } from '../../functions/domain/common/ports.js';
import type { DestinationWriter } from '../../functions/domain/destinations/destinations.js';
import { localDeadLetterQueueName, localQueueName, type QueueDeclaration } from '../../functions/queues.js';
import type { ResourceWiring } from '../../functions/route-declaration.js';
import type { Settings } from '../../functions/settings.js';
import { createLambdaContext } from './http-server.js';
import { startPoller } from './sqs/poller.js';
import { queueArn } from './sqs/queues.js';
import type { RunningLocalSqs } from './sqs/server.js';

/** What the local stack hands its consumers, beside their environment (as HandlerParts for routes). */
export interface LocalConsumerParts {
  /** The stack's in-process renderer (the cloud's consumers invoke the async renderer Lambda). */
  readonly renderer?: Renderer;
  /** Tests only: the resolver webhook hosts are judged with. */
  readonly webhookLookup?: LookupAll;
  /** The usage events' stand-in bus: a JSON-lines file in DATA_DIR (usage-events.ts). */
  readonly usageBus?: UsageEventBus;
  /** The destination writer through the stack's STS stand-in and S3 server (lib/local/sts.ts). */
  readonly destinationWriter?: DestinationWriter;
}

/**
 * Makes every queue of the table on the local SQS server (a queue made by an earlier run keeps its
 * messages and takes the entry's attributes), and answers each one's URL by its name.
 */
export const ensureLocalQueues = (
  sqs: RunningLocalSqs,
  queues: readonly QueueDeclaration[],
  consumers: readonly ConsumerDeclaration[],
  settings: Settings,
): ReadonlyMap<string, string> => {
  const urls = new Map<string, string>();
  for (const q of queues) {
    if (q.fifo) throw new Error(`the ${q.name} queue is FIFO: the local SQS server has standard queues only`);
    const name = localQueueName(q);
    const deadLetters = localDeadLetterQueueName(q);
    const consumerTimeoutSeconds = consumerOf(q, consumers).timeoutSeconds(settings);
    sqs.queues.ensureQueue(deadLetters, { MessageRetentionPeriod: String(q.deadLetterRetentionSeconds) });
    sqs.queues.ensureQueue(name, {
      VisibilityTimeout: String(q.localVisibilityTimeoutSeconds(settings, consumerTimeoutSeconds)),
      MessageRetentionPeriod: String(q.retentionSeconds),
      RedrivePolicy: JSON.stringify({
        deadLetterTargetArn: queueArn(deadLetters),
        maxReceiveCount: q.maxReceiveCount(settings),
      }),
    });
    // The consumers that had received these died with the last run of the stack: their messages
    // come back now rather than after a visibility timeout sized for the longest work.
    if (q.localReturnsInFlightAtStart) sqs.queues.returnInFlight(name);
    urls.set(q.name, sqs.queueUrl(name));
  }
  return urls;
};

/**
 * A consumer's module: functions/<name>/index.ts (a pattern the start bundle's esbuild follows, so
 * every consumer's module is in it), or the index.ts of the folder its entry names (a test's).
 */
const loadModule = async (c: ConsumerDeclaration): Promise<ConsumerModule<unknown, LocalConsumerParts>> => {
  const module = (await (c.directory === undefined
    ? import(`../../functions/${c.name}/index.ts`)
    : import(pathToFileURL(join(c.directory, 'index.ts')).href))) as Partial<
    ConsumerModule<unknown, LocalConsumerParts>
  >;
  if (typeof module.createHandler !== 'function') {
    throw new Error(
      `the consumer ${c.name}: its index.ts exports no createHandler (functions/core/consumer.ts)`,
    );
  }
  return module as ConsumerModule<unknown, LocalConsumerParts>;
};

export interface LocalConsumersOptions {
  readonly consumers: readonly ConsumerDeclaration[];
  readonly settings: Settings;
  readonly sqs: RunningLocalSqs;
  readonly client: SQSClient;
  readonly region: string;
  /** The environment a function with this wiring is given (the settings, emulators and its bindings). */
  readonly environmentFor: (wiring: ResourceWiring) => Record<string, string>;
  readonly parts: LocalConsumerParts;
  /** Tests only: consumers left unstarted (their queue left to the test). @default none */
  readonly skip?: ReadonlySet<string>;
  /** Told about a scheduled run that failed. */
  readonly onError?: (consumer: string, error: unknown) => void;
}

/** Every consumer of the table started; answers the function that stops them (awaiting runs under way). */
export const startLocalConsumers = async (o: LocalConsumersOptions): Promise<() => Promise<void>> => {
  const started = await Promise.all(
    o.consumers.filter((c) => !o.skip?.has(c.name)).map(async (c) => ({ c, module: await loadModule(c) })),
  );
  const stops: (() => Promise<void>)[] = [];
  // Schedules first: one that runs before the stack serves has ended what a killed stack left.
  for (const { c, module } of started) {
    if (c.source.kind !== 'schedule') continue;
    const handler = module.createHandler(
      o.environmentFor(consumerWiring(c)),
      o.parts,
    ) as ScheduledHandler<unknown>;
    stops.push(await startSchedule(c, c.source, handler, o));
  }
  for (const { c, module } of started) {
    if (c.source.kind !== 'queue') continue;
    const handler = module.createHandler(o.environmentFor(consumerWiring(c)), o.parts) as SqsHandler;
    stops.push(startQueueConsumer(c, c.source, handler, o));
  }
  return async () => {
    await Promise.all(stops.map((stop) => stop()));
  };
};

/** The queue's event source mapping: its batch size, its concurrency, partial batch failures. */
const startQueueConsumer = (
  c: ConsumerDeclaration,
  source: QueueSource,
  handler: SqsHandler,
  o: LocalConsumersOptions,
): (() => Promise<void>) => {
  const name = localQueueName(source.queue);
  const timeoutMs = c.timeoutSeconds(o.settings) * 1000;
  const poller = startPoller({
    client: o.client,
    queueUrl: o.sqs.queueUrl(name),
    queueArn: queueArn(name),
    region: o.region,
    consumer: (event) => handler(event, createLambdaContext(c.name, timeoutMs)),
    batchSize: source.batchSize,
    concurrency: (source.localConcurrency ?? source.maxConcurrency)(o.settings),
  });
  return () => poller.stop();
};

/**
 * A schedule's timer: a first run at start-up when its entry says so (awaited: the stack serves
 * after it), then one every interval; a run slower than the interval is not overlapped by the next.
 */
const startSchedule = async (
  c: ConsumerDeclaration,
  source: ScheduleSource,
  handler: ScheduledHandler<unknown>,
  o: LocalConsumersOptions,
): Promise<() => Promise<void>> => {
  const onError = o.onError ?? ((name, e) => console.error(`local stack: ${name} failed:`, e));
  const timeoutMs = c.timeoutSeconds(o.settings) * 1000;
  const run = (event: object = { source: 'local.schedule' }) =>
    handler(event, createLambdaContext(c.name, timeoutMs)).catch((e: unknown) => onError(c.name, e));
  const state: { running?: Promise<unknown> } = {};
  if (source.runsBeforeLocalStart) await run(LOCAL_START_EVENT);
  const timer = setInterval(() => {
    if (state.running) return;
    state.running = run().finally(() => {
      state.running = undefined;
    });
  }, source.localIntervalSeconds(o.settings) * 1000);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await state.running;
  };
};
