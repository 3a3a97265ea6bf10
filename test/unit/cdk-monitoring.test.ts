/**
 * Alarms that reach someone: synth refuses a stack whose alarms would notify nobody unless it
 * opts out, and a stack with a destination has the API's and the renderer's alarms (errors,
 * latency, throttles, duration near timeout), all notifying it, and a dashboard of the golden
 * signals.
 */
import { App } from 'aws-cdk-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import { consumers, webhookSender } from '../../functions/consumers.js';
import { renderQueue, webhookQueue } from '../../functions/queues.js';
import { stackPropsFromContext } from '../../lib/context-props.js';
import { API_P90_LATENCY_ALARM_MS, NEAR_TIMEOUT_SHARE } from '../../lib/service-monitoring.js';
import { resolveSettings } from '../../lib/service-settings.js';
import { AlarmDestinationError } from '../../lib/service-stack.js';
import { type Synthesized, synthServiceStack } from '../helpers/cdk-synth.js';

// biome-ignore lint/suspicious/noExplicitAny: CloudFormation JSON is inspected by the assertions
type Json = any;

const TOPIC_ARN = 'arn:aws:sns:eu-west-1:123456789012:ops-alarms';
/**
 * The API's two (5xx, latency), the renderer's three (errors, throttles, duration) and the async
 * renderer's two, each of the four consumers' errors and heartbeat, the render queue's
 * three (depth, age, DLQ), the webhook queue's two (age, DLQ), the batch output queue's two
 * (age, DLQ), the delivery queue's two (age, DLQ) and the table's throttles.
 */
const ALARM_COUNT = 2 + 3 + 2 + consumers.length * 2 + 3 + 2 + 2 + 2 + 1;

const alarms = (s: Synthesized): Json[] => Object.values(s.template.findResources('AWS::CloudWatch::Alarm'));
const metricOf = (alarm: Json) => ({
  namespace: alarm.Properties.Namespace,
  name: alarm.Properties.MetricName,
  statistic: alarm.Properties.Statistic ?? alarm.Properties.ExtendedStatistic,
});

describe('an alarm destination', () => {
  it('is required: synth without one fails and says how to give one or opt out', () => {
    const attempt = () =>
      synthServiceStack({ props: { alarms: undefined, alarmEmail: undefined, alarmTopicArn: undefined } });
    expect(attempt).toThrow(AlarmDestinationError);
    expect(attempt).toThrow(/alarmEmail=.*alarmTopicArn=.*alarms=none/s);
  });

  it('can be declined with alarms=none: the alarms and the dashboard are made, notifying nobody', () => {
    const s = synthServiceStack({ props: { alarms: 'none' } });
    expect(alarms(s)).toHaveLength(ALARM_COUNT);
    for (const a of alarms(s)) {
      expect(a.Properties.AlarmActions).toBeUndefined();
      expect(a.Properties.OKActions).toBeUndefined();
    }
    s.template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
    expect(s.nagFindings).toEqual([]);
  });

  it('refuses another opt-out word', () => {
    expect(() => synthServiceStack({ props: { alarms: 'nobody' as never } })).toThrow(/alarms.*"none"/);
  });

  it('is read from context: -c alarms=none, -c alarmEmail=…', () => {
    const props = (context: Record<string, string>) => stackPropsFromContext(new App({ context }).node);
    expect(props({ alarms: 'none' }).alarms).toBe('none');
    expect(props({ alarmEmail: 'ops@example.com' }).alarmEmail).toBe('ops@example.com');
  });
});

describe('with a destination', () => {
  let s: Synthesized;
  beforeAll(() => {
    s = synthServiceStack({ props: { alarmTopicArn: TOPIC_ARN } });
  });

  it(`has ${ALARM_COUNT} alarms, every one notifying the topic when it fires and when it recovers`, () => {
    expect(alarms(s)).toHaveLength(ALARM_COUNT);
    for (const a of alarms(s)) {
      expect(a.Properties.AlarmActions).toEqual([TOPIC_ARN]);
      expect(a.Properties.OKActions).toEqual([TOPIC_ARN]);
    }
    expect(s.stack.monitoring.alarms).toHaveLength(ALARM_COUNT);
    const queue = s.stack.queue(renderQueue.name);
    expect(s.stack.monitoring.alarms).toEqual(
      expect.arrayContaining([queue.depthAlarm, queue.oldestAgeAlarm, queue.deadLetterAlarm]),
    );
    expect(s.stack.monitoring.alarms).toEqual(
      expect.arrayContaining([s.stack.asyncRenderer.errorsAlarm, s.stack.asyncRenderer.throttlesAlarm]),
    );
  });

  it("covers the webhook sender's errors, its own faults, and its dead-letter queue", () => {
    const senderId = s.logicalId(s.stack.consumer(webhookSender.name).function);
    const sender = alarms(s).find((a) =>
      (a.Properties.Metrics ?? []).some(
        (m: Json) => m.MetricStat?.Metric.MetricName === 'WebhookSenderFaults',
      ),
    );
    const metrics = (sender?.Properties.Metrics ?? []).flatMap((m: Json) =>
      m.MetricStat ? [m.MetricStat.Metric] : [],
    );
    expect(metrics).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          MetricName: 'Errors',
          Dimensions: [{ Name: 'FunctionName', Value: { Ref: senderId } }],
        }),
        expect.objectContaining({ Namespace: 'PdfRenderService', MetricName: 'WebhookSenderFaults' }),
      ]),
    );
    const dlq = alarms(s).find(
      (a) =>
        a.Properties.MetricName === 'ApproximateNumberOfMessagesVisible' &&
        a.Properties.Dimensions[0].Value['Fn::GetAtt']?.[0] ===
          s.logicalId(s.stack.queue(webhookQueue.name).deadLetterQueue),
    );
    expect(dlq.Properties.Dimensions[0].Value['Fn::GetAtt'][0]).toBe(
      s.logicalId(s.stack.queue(webhookQueue.name).deadLetterQueue),
    );
  });

  it("covers the API's 5xx rate and p90 latency", () => {
    const all = alarms(s);
    expect(
      all.some((a) =>
        (a.Properties.Metrics ?? []).some((m: Json) => m.MetricStat?.Metric.MetricName === '5xx'),
      ),
    ).toBe(true);
    const latency = all.find((a) => a.Properties.MetricName === 'Latency');
    expect(metricOf(latency)).toEqual({ namespace: 'AWS/ApiGateway', name: 'Latency', statistic: 'p90' });
    expect(latency.Properties.Threshold).toBe(API_P90_LATENCY_ALARM_MS);
  });

  it("covers the renderer's errors, throttles and duration near its timeout", () => {
    const renderer = { Ref: s.logicalId(s.stack.renderer.function) };
    const on = (name: string) =>
      alarms(s).filter(
        (a) =>
          a.Properties.Namespace === 'AWS/Lambda' &&
          a.Properties.MetricName === name &&
          JSON.stringify(a.Properties.Dimensions) ===
            JSON.stringify([{ Name: 'FunctionName', Value: renderer }]),
      );
    expect(on('Errors')).toHaveLength(1);
    expect(on('Throttles')).toHaveLength(1);
    const [duration] = on('Duration');
    expect(duration.Properties.Statistic).toBe('Maximum');
    const timeoutMs = resolveSettings().rendererTimeoutSeconds * 1000;
    expect(duration.Properties.Threshold).toBe(Math.floor(timeoutMs * NEAR_TIMEOUT_SHARE));
    expect(duration.Properties.Threshold).toBeLessThan(timeoutMs);
  });

  it('has a dashboard of the golden signals: traffic, errors, latency, saturation, and the alarms', () => {
    const [dashboard] = Object.values(s.template.findResources('AWS::CloudWatch::Dashboard')) as Json[];
    const body = JSON.stringify(s.stack.resolve(dashboard.Properties.DashboardBody));
    for (const title of ['Traffic', 'Errors', 'Latency: API', 'Latency: renderer', 'Saturation', 'Alarms']) {
      expect(body).toContain(title);
    }
    for (const metric of [
      'Count',
      '5xx',
      'Latency',
      'Invocations',
      'Errors',
      'Duration',
      'ConcurrentExecutions',
      'Throttles',
    ]) {
      // The body is JSON inside a JSON string: its quotes arrive escaped.
      expect(body).toContain(`\\"${metric}\\"`);
    }
  });

  it('passes cdk-nag AwsSolutions', () => {
    expect(s.nagFindings).toEqual([]);
  });
});
