/**
 * The one consumer stack (functions/core/consumer.ts): partial batch failures through Powertools'
 * batch utility, each record's body parsed once, and the records of a batch handled one after
 * another or side by side as the consumer's entry declares (the render worker's one at a time,
 * the webhook sender's all at once); and the heartbeat every completed run counts, which the
 * consumers' heartbeat alarms watch (lib/service-consumer.ts).
 */
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from 'vitest';
import { type ConsumerDeclaration, renderWorker, sweeper, webhookSender } from '../../functions/consumers.js';
import {
  type MessageHandler,
  RetryMessage,
  scheduledConsumer,
  sqsHandler,
} from '../../functions/core/consumer.js';
import { SERVICE_METRICS } from '../../functions/wiring.js';
import { noteTaker } from '../fixtures/consumers/table.js';

const record = (messageId: string, body: string): SQSRecord => ({
  messageId,
  receiptHandle: `r-${messageId}`,
  body,
  attributes: {
    ApproximateReceiveCount: '1',
    SentTimestamp: '0',
    SenderId: 'test',
    ApproximateFirstReceiveTimestamp: '0',
  },
  messageAttributes: {},
  md5OfBody: '',
  eventSource: 'aws:sqs',
  eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:q',
  awsRegion: 'us-east-1',
});

const event = (...records: SQSRecord[]): SQSEvent => ({ Records: records });

/** Counts the handlers running at once; each waits a few event-loop turns. */
const concurrencyProbe = () => {
  const seen = { now: 0, peak: 0, parsed: 0 };
  const handler: MessageHandler<{ n: number }> = {
    parse(body) {
      seen.parsed++;
      const n = Number(body);
      return Number.isInteger(n) ? { n } : undefined;
    },
    invalid: { level: 'warn', message: 'not a number' },
    async handle() {
      seen.now++;
      seen.peak = Math.max(seen.peak, seen.now);
      await new Promise((r) => setTimeout(r, 5));
      seen.now--;
    },
  };
  return { seen, handler };
};

describe('the consumer stack', () => {
  it.each([
    [renderWorker.name, renderWorker, 1],
    // One message per run since issue 38: its records, were there several, one at a time.
    [webhookSender.name, webhookSender, 1],
    // A consumer whose entry declares records side by side (the test fixture's).
    [noteTaker.name, noteTaker, 3],
  ] as [string, ConsumerDeclaration, number][])(
    "handles a batch's records as %s's entry declares (%#: at most the declared number at once)",
    async (_, declaration, peak) => {
      const { seen, handler } = concurrencyProbe();
      const answer = await sqsHandler(
        declaration,
        handler,
      )(event(record('a', '1'), record('b', '2'), record('c', '3')));
      expect(answer).toEqual({ batchItemFailures: [] });
      expect(seen.peak).toBe(peak);
      expect(seen.parsed).toBe(3);
    },
  );

  it('names the records whose handling threw, acknowledges the others and a body that is no message', async () => {
    const handled: number[] = [];
    const handler: MessageHandler<{ n: number }> = {
      parse: (body) => (/^\d+$/.test(body) ? { n: Number(body) } : undefined),
      invalid: { level: 'warn', message: 'not a number' },
      async handle({ n }) {
        if (n === 2) throw new RetryMessage('held back');
        if (n === 3) throw new Error('a fault');
        handled.push(n);
      },
    };
    const answer = await sqsHandler(
      webhookSender,
      handler,
    )(event(record('a', '1'), record('b', '2'), record('c', '3'), record('d', 'junk')));
    expect(answer.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual(['b', 'c']);
    expect(handled).toEqual([1]);
  });

  it('answers a batch whose every record failed with every record, rather than throwing', async () => {
    const handler: MessageHandler<string> = {
      parse: (body) => body,
      invalid: { level: 'warn', message: 'never' },
      async handle() {
        throw new RetryMessage('held back');
      },
    };
    const answer = await sqsHandler(renderWorker, handler)(event(record('a', 'x'), record('b', 'y')));
    expect(answer.batchItemFailures.map((f) => f.itemIdentifier)).toEqual(['a', 'b']);
  });
});

describe('the heartbeat', () => {
  let log: MockInstance<typeof console.log>;
  beforeEach(() => {
    // Metrics are off where POWERTOOLS_DEV is on (tests, the local stack), unless turned on.
    vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'false');
    log = vi.spyOn(console, 'log').mockImplementation(() => {});
  });
  afterEach(() => {
    vi.unstubAllEnvs();
    log.mockRestore();
  });

  /** The heartbeats written as CloudWatch embedded metrics, with their dimensions. */
  const heartbeats = () =>
    log.mock.calls.flatMap(([line]) => {
      const emf = typeof line === 'string' && line.startsWith('{') ? JSON.parse(line) : undefined;
      const beat = emf?.[SERVICE_METRICS.consumerHeartbeat];
      if (beat === undefined) return [];
      const [directive] = emf._aws.CloudWatchMetrics;
      return [
        {
          value: beat,
          namespace: directive.Namespace,
          dimensions: Object.fromEntries(directive.Dimensions[0].map((d: string) => [d, emf[d]])),
        },
      ];
    });

  it('counts one for each completed batch of a queue consumer, under its name, also when records failed', async () => {
    const handler: MessageHandler<string> = {
      parse: (body) => body,
      invalid: { level: 'warn', message: 'never' },
      async handle(message) {
        if (message === 'bad') throw new RetryMessage('held back');
      },
    };
    const consume = sqsHandler(webhookSender, handler);
    await consume(event(record('a', 'ok')));
    await consume(event(record('b', 'bad')));
    expect(heartbeats()).toEqual([
      {
        value: 1,
        namespace: SERVICE_METRICS.namespace,
        dimensions: { service: SERVICE_METRICS.service, consumer: webhookSender.name },
      },
      {
        value: 1,
        namespace: SERVICE_METRICS.namespace,
        dimensions: { service: SERVICE_METRICS.service, consumer: webhookSender.name },
      },
    ]);
  });

  it('counts one for a scheduled run that completes, and none for one that throws', async () => {
    const outcomes = ['done', new Error('the table is gone')];
    const { createHandler } = scheduledConsumer({ ...sweeper, needs: {} }, () => async () => {
      const next = outcomes.shift();
      if (next instanceof Error) throw next;
      return next;
    });
    const run = createHandler({});
    await expect(run()).resolves.toBe('done');
    expect(heartbeats()).toEqual([
      expect.objectContaining({ value: 1, dimensions: expect.objectContaining({ consumer: sweeper.name }) }),
    ]);
    await expect(run()).rejects.toThrow('the table is gone');
    expect(heartbeats()).toHaveLength(1);
  });
});
