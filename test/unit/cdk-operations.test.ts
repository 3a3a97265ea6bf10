/**
 * Every background job watched (issue 42), read from the synthesized template by iterating the
 * consumer table, so that a consumer added to it is held to the same without a new test: each has
 * a failure destination (its queue's DLQ, or a failure queue for a scheduled run), an errors alarm
 * on its function and a heartbeat alarm on the heartbeat its runs count; every queue has an alarm
 * on its oldest message's age, the table one on its throttles; and every alarm of the stack
 * notifies the one topic when it fires and when it recovers, and links to its runbook section.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { type ConsumerDeclaration, consumers } from '../../functions/consumers.js';
import { queues } from '../../functions/queues.js';
import { tableSchema } from '../../functions/table.js';
import { SERVICE_METRICS } from '../../functions/wiring.js';
import { RUNBOOK_PATH, RUNBOOK_SECTIONS } from '../../lib/runbook.js';
import { PROJECT_ROOT } from '../../lib/service-function.js';
import { resolveSettings } from '../../lib/service-settings.js';
import { tablesWithNoteTaker } from '../fixtures/consumers/table.js';
import { type Synthesized, synthServiceStack } from '../helpers/cdk-synth.js';

// biome-ignore lint/suspicious/noExplicitAny: CloudFormation JSON is inspected by the assertions
type Json = any;

const TOPIC_ARN = 'arn:aws:sns:eu-west-1:123456789012:ops-alarms';

const alarms = (s: Synthesized): Json[] => Object.values(s.template.findResources('AWS::CloudWatch::Alarm'));
/** The metrics an alarm reads: its own, or those of its expression. */
const metricsOf = (alarm: Json): Json[] =>
  alarm.Properties.MetricName
    ? [
        {
          Namespace: alarm.Properties.Namespace,
          MetricName: alarm.Properties.MetricName,
          Dimensions: alarm.Properties.Dimensions ?? [],
        },
      ]
    : (alarm.Properties.Metrics ?? []).flatMap((m: Json) =>
        m.MetricStat ? [{ Dimensions: [], ...m.MetricStat.Metric }] : [],
      );
const dimension = (metric: Json, name: string): Json =>
  (metric.Dimensions as Json[]).find((d) => d.Name === name)?.Value;
const alarmsOn = (s: Synthesized, match: (metric: Json) => boolean): Json[] =>
  alarms(s).filter((a) => metricsOf(a).some(match));
const statementsOfRole = (s: Synthesized, roleId: string): Json[] =>
  Object.values(s.template.findResources('AWS::IAM::Policy'))
    .filter((p: Json) => (p.Properties.Roles as Json[]).some((r) => r.Ref === roleId))
    .flatMap((p: Json) => p.Properties.PolicyDocument.Statement);

describe.each([
  ['the service’s consumer table', consumers, undefined],
  ['the table with a consumer added (the fixture’s)', tablesWithNoteTaker.consumers, tablesWithNoteTaker],
])('every consumer of %s', (_, table, asyncTables) => {
  let s: Synthesized;
  beforeAll(() => {
    s = synthServiceStack({ props: { alarmTopicArn: TOPIC_ARN, ...(asyncTables ? { asyncTables } : {}) } });
  });
  const fnOf = (c: ConsumerDeclaration) => s.logicalId(s.stack.consumer(c.name).function);

  it.each(table.map((c) => [c.name, c] as const))('%s has a failure destination', (_name, c) => {
    const fnId = fnOf(c);
    if (c.source.kind === 'queue') {
      // Its event source's queue moves a message it failed on to a dead-letter queue.
      const [mapping] = Object.values(s.template.findResources('AWS::Lambda::EventSourceMapping')).filter(
        (m: Json) => m.Properties.FunctionName.Ref === fnId,
      ) as Json[];
      const queueId = mapping.Properties.EventSourceArn['Fn::GetAtt'][0];
      const queue: Json = s.template.findResources('AWS::SQS::Queue')[queueId];
      const dlqId = queue.Properties.RedrivePolicy.deadLetterTargetArn['Fn::GetAtt'][0];
      expect(s.template.findResources('AWS::SQS::Queue')[dlqId]).toBeDefined();
      expect(queue.Properties.RedrivePolicy.maxReceiveCount).toBeGreaterThanOrEqual(1);
      return;
    }
    // A scheduled run that failed goes to a queue (Lambda's on-failure destination), as does one
    // EventBridge could not deliver (the target's dead-letter queue), and the role may send there.
    const [config] = Object.values(s.template.findResources('AWS::Lambda::EventInvokeConfig')).filter(
      (e: Json) => e.Properties.FunctionName.Ref === fnId,
    ) as Json[];
    const destination = config.Properties.DestinationConfig.OnFailure.Destination;
    const failureQueueId = destination['Fn::GetAtt'][0];
    expect(s.template.findResources('AWS::SQS::Queue')[failureQueueId]).toBeDefined();
    expect(config.Properties.MaximumRetryAttempts).toBe(c.source.retryAttempts);
    const [rule] = Object.values(s.template.findResources('AWS::Events::Rule')).filter((r: Json) =>
      r.Properties.Targets.some((t: Json) => t.Arn['Fn::GetAtt']?.[0] === fnId),
    ) as Json[];
    expect(rule.Properties.ScheduleExpression).toBe(
      `rate(${c.source.rateMinutes} minute${c.source.rateMinutes === 1 ? '' : 's'})`,
    );
    const [target] = rule.Properties.Targets;
    expect(target.DeadLetterConfig.Arn).toEqual(destination);
    expect(target.RetryPolicy.MaximumRetryAttempts).toBeGreaterThan(0);
    const fn: Json = s.template.findResources('AWS::Lambda::Function')[fnId];
    const roleId = fn.Properties.Role['Fn::GetAtt'][0];
    expect(
      statementsOfRole(s, roleId).some(
        (st: Json) =>
          [st.Action].flat().includes('sqs:SendMessage') &&
          [st.Resource].flat().some((r: Json) => JSON.stringify(r) === JSON.stringify(destination)),
      ),
    ).toBe(true);
  });

  it.each(table.map((c) => [c.name, c] as const))("%s has an alarm on its function's errors", (_name, c) => {
    const fnId = fnOf(c);
    expect(
      alarmsOn(
        s,
        (m) =>
          m.Namespace === 'AWS/Lambda' &&
          m.MetricName === 'Errors' &&
          dimension(m, 'FunctionName')?.Ref === fnId,
      ),
    ).toHaveLength(1);
  });

  it.each(table.map((c) => [c.name, c] as const))(
    '%s has a heartbeat alarm: on the heartbeat its runs count, firing when runs stop',
    (_name, c) => {
      const [alarm, more] = alarmsOn(
        s,
        (m) =>
          m.Namespace === SERVICE_METRICS.namespace &&
          m.MetricName === SERVICE_METRICS.consumerHeartbeat &&
          dimension(m, SERVICE_METRICS.consumerDimension) === c.name &&
          dimension(m, 'service') === SERVICE_METRICS.service,
      );
      expect(more).toBeUndefined();
      const p = alarm.Properties;
      expect(p.EvaluationPeriods).toBeGreaterThanOrEqual(3);
      expect(p.DatapointsToAlarm).toBe(p.EvaluationPeriods);
      if (c.source.kind === 'schedule') {
        // Runs every period: a period without a completed run is the alarm, no data included.
        expect(p).toMatchObject({ Threshold: 1, ComparisonOperator: 'LessThanThreshold' });
        expect(p.TreatMissingData).toBe('breaching');
        expect(p.Period * p.EvaluationPeriods).toBeGreaterThan(c.timeoutSeconds(resolveSettings().settings));
        return;
      }
      // Runs only when messages wait: the alarm is messages waiting a whole period and no run.
      const queueId = s.logicalId(s.stack.queue(c.source.queue.name).queue);
      const waiting = metricsOf(alarm).find((m) => m.MetricName === 'ApproximateNumberOfMessagesVisible');
      expect(dimension(waiting, 'QueueName')).toEqual({ 'Fn::GetAtt': [queueId, 'QueueName'] });
      const period = p.Metrics.find((m: Json) => m.MetricStat).MetricStat.Period;
      // Longer than its longest run, so that one run in progress is not a stopped consumer.
      expect(period * p.EvaluationPeriods).toBeGreaterThan(c.timeoutSeconds(resolveSettings().settings));
    },
  );

  it('leaves no alarm without its actions: each notifies the topic when it fires and when it recovers', () => {
    expect(alarms(s).length).toBeGreaterThanOrEqual(2 * table.length + queues.length);
    for (const a of alarms(s)) {
      expect(a.Properties.AlarmActions).toEqual([TOPIC_ARN]);
      expect(a.Properties.OKActions).toEqual([TOPIC_ARN]);
    }
    // And the dashboard shows every one.
    expect(s.stack.monitoring.alarms).toHaveLength(alarms(s).length);
    expect(s.nagFindings).toEqual([]);
  });
});

describe('the queues and the table', () => {
  let s: Synthesized;
  beforeAll(() => {
    s = synthServiceStack({ props: { alarmTopicArn: TOPIC_ARN } });
  });

  it.each(queues.map((q) => [q.name, q] as const))(
    "%s: an alarm on the age of the queue's oldest message",
    (_name, q) => {
      const queueId = s.logicalId(s.stack.queue(q.name).queue);
      const [alarm] = alarmsOn(
        s,
        (m) =>
          m.MetricName === 'ApproximateAgeOfOldestMessage' &&
          dimension(m, 'QueueName')?.['Fn::GetAtt']?.[0] === queueId,
      );
      expect(alarm.Properties.Threshold).toBe(q.alarms?.oldestAge?.thresholdSeconds ?? 3600);
    },
  );

  it('has an alarm on throttled reads and writes of the table and of each of its indexes', () => {
    const tableRef = { Ref: s.logicalId(s.stack.table) };
    const [alarm, more] = alarmsOn(s, (m) => m.MetricName === 'ReadThrottleEvents');
    expect(more).toBeUndefined();
    const read = metricsOf(alarm).map((m) => [
      m.MetricName,
      dimension(m, 'TableName'),
      dimension(m, 'GlobalSecondaryIndexName'),
    ]);
    const expected = [undefined, ...tableSchema.globalSecondaryIndexes.map((i) => i.indexName)].flatMap(
      (index) => [
        ['ReadThrottleEvents', tableRef, index],
        ['WriteThrottleEvents', tableRef, index],
      ],
    );
    expect(read).toEqual(expect.arrayContaining(expected));
    expect(read).toHaveLength(expected.length);
    expect(alarm.Properties.Threshold).toBe(1);
  });
});

describe('the runbook', () => {
  /** GitHub's anchors of the runbook's headings. */
  const anchors = () =>
    new Set(
      [...readFileSync(join(PROJECT_ROOT, RUNBOOK_PATH), 'utf8').matchAll(/^#{2,3} (.+)$/gm)].map(([, h]) =>
        String(h)
          .trim()
          .toLowerCase()
          .replace(/[^a-z0-9 -]/g, '')
          .replace(/ /g, '-'),
      ),
    );

  it('has a section for every kind of alarm', () => {
    expect([...anchors()]).toEqual(expect.arrayContaining([...RUNBOOK_SECTIONS]));
  });

  it('is linked from every alarm of the stack, at a section that exists', () => {
    const s = synthServiceStack({ props: { alarmTopicArn: TOPIC_ARN, asyncTables: tablesWithNoteTaker } });
    const sections = anchors();
    for (const a of alarms(s)) {
      const link = /Runbook: (\S+)#([a-z0-9-]+)$/.exec(a.Properties.AlarmDescription);
      expect(link?.[1], a.Properties.AlarmDescription).toBe(RUNBOOK_PATH);
      expect(sections.has(String(link?.[2])), a.Properties.AlarmDescription).toBe(true);
    }
  });
});
