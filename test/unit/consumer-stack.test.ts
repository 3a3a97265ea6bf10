/**
 * The one consumer stack (functions/core/consumer.ts): partial batch failures through Powertools'
 * batch utility, each record's body parsed once, and the records of a batch handled one after
 * another or side by side as the consumer's entry declares (the render worker's one at a time,
 * the webhook sender's all at once).
 */
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { type ConsumerDeclaration, renderWorker, webhookSender } from '../../functions/consumers.js';
import { type MessageHandler, RetryMessage, sqsHandler } from '../../functions/core/consumer.js';

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
    [webhookSender.name, webhookSender, 3],
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
