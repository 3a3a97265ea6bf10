/**
 * What an operator watches: the alarms that the API and the renderer do not make themselves (API
 * latency, renders near the renderer's timeout), and a CloudWatch dashboard of the service's golden
 * signals (traffic, errors, latency and saturation) with every alarm's state.
 *
 * The other alarms live beside what they measure (the API's 5xx in service-api.ts, the renderers'
 * in renderer-function.ts, the queues', the consumers' and the table's in their constructs); the
 * stack gives every alarm its actions, in one place (service-stack.ts).
 */
import { Duration } from 'aws-cdk-lib';
import {
  Alarm,
  AlarmStatusWidget,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  MathExpression,
  Stats,
  TextWidget,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { Construct } from 'constructs';
import type { RendererFunction } from './renderer-function.js';
import { RUNBOOK_PATH, withRunbook } from './runbook.js';
import type { ServiceApi } from './service-api.js';
import type { ServiceQueue } from './service-queue.js';

/**
 * The API latency alarm's threshold: the 90th percentile of the stage's latency over 5 minutes.
 * A render takes 0.1 to 0.6 s warm and about 1.5 to 4 s after a cold start (README, Speed and
 * cost); requests that wait on a slow page are bounded by the render budget (25 s). 10 s at p90
 * means most callers wait on something the service does, not on their own pages.
 */
export const API_P90_LATENCY_ALARM_MS = 10_000;
/** A render that took this share of the renderer's timeout was close to being cut off. */
export const NEAR_TIMEOUT_SHARE = 0.9;

export interface ServiceMonitoringProps {
  readonly api: ServiceApi;
  readonly renderer: RendererFunction;
  /** Async renders' queue: its alarms join the others, its depth and age the dashboard. */
  readonly renderQueue?: ServiceQueue;
  /** The renderer's Lambda timeout (the duration alarm's reference). */
  readonly rendererTimeoutSeconds: number;
  /** The renderer's reserved concurrency, drawn as its cap. @default none drawn */
  readonly rendererReservedConcurrency?: number;
  /** The alarms other constructs made (every other alarm of the stack): shown with these. */
  readonly otherAlarms: readonly Alarm[];
}

export class ServiceMonitoring extends Construct {
  readonly apiLatencyAlarm: Alarm;
  readonly rendererDurationAlarm: Alarm;
  readonly dashboard: Dashboard;
  /** Every alarm of the stack, the API's and the renderer's own included. */
  readonly alarms: readonly Alarm[];

  constructor(scope: Construct, id: string, props: ServiceMonitoringProps) {
    super(scope, id);
    const { api, renderer } = props;
    const fn = renderer.function;
    const period = Duration.minutes(5);
    const timeoutMs = props.rendererTimeoutSeconds * 1000;

    const p90Latency = api.stage.metricLatency({ period, statistic: Stats.percentile(90) });
    this.apiLatencyAlarm = new Alarm(this, 'ApiLatencyAlarm', {
      alarmDescription: withRunbook(
        `The API's 90th-percentile latency was above ${API_P90_LATENCY_ALARM_MS / 1000} s in 3 five-minute ` +
          'periods running: renders are slow (cold starts, a saturated renderer, large documents) or a ' +
          "dependency is; see the dashboard's latency and saturation graphs",
        'api-latency',
      ),
      metric: p90Latency,
      threshold: API_P90_LATENCY_ALARM_MS,
      evaluationPeriods: 3,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    const maxDuration = fn.metricDuration({ period, statistic: Stats.MAXIMUM });
    this.rendererDurationAlarm = new Alarm(this, 'RendererDurationAlarm', {
      alarmDescription: withRunbook(
        `A render took more than ${NEAR_TIMEOUT_SHARE * 100}% of the renderer's ${props.rendererTimeoutSeconds} s ` +
          'timeout: renders near it are cut off (answered 504, counted as renderer errors); raise the memory ' +
          '(rendererMemorySizeMiB buys CPU) or look for the slow pages in the logs',
        'renderer-duration',
      ),
      metric: maxDuration,
      threshold: Math.floor(timeoutMs * NEAR_TIMEOUT_SHARE),
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    this.alarms = [this.apiLatencyAlarm, this.rendererDurationAlarm, ...props.otherAlarms];

    const width = 12;
    const height = 6;
    const reserved = props.rendererReservedConcurrency;
    this.dashboard = new Dashboard(this, 'Dashboard', {
      defaultInterval: Duration.hours(3),
      widgets: [
        [
          new TextWidget({
            markdown:
              '# PDF render service\nTraffic, errors, latency and saturation of the API and the renderer. ' +
              `Alarms notify the stack's alarm destination, and again when they recover; runbook: ${RUNBOOK_PATH}.`,
            width: 24,
            height: 2,
          }),
        ],
        [new AlarmStatusWidget({ title: 'Alarms', alarms: [...this.alarms], width: 24, height: 3 })],
        [
          new GraphWidget({
            title: 'Traffic: API requests and renders',
            left: [
              api.stage.metricCount({ period: Duration.minutes(1), label: 'API requests' }),
              fn.metricInvocations({ period: Duration.minutes(1), label: 'Renders (renderer invocations)' }),
            ],
            width,
            height,
          }),
          new GraphWidget({
            title: 'Errors',
            left: [
              api.stage.metricServerError({ period: Duration.minutes(1), label: 'API 5xx' }),
              api.stage.metricClientError({ period: Duration.minutes(1), label: 'API 4xx' }),
              fn.metricErrors({ period: Duration.minutes(1), label: 'Renderer errors' }),
            ],
            width,
            height,
          }),
        ],
        [
          new GraphWidget({
            title: 'Latency: API (ms)',
            left: [
              api.stage.metricLatency({
                period: Duration.minutes(1),
                statistic: Stats.percentile(50),
                label: 'p50',
              }),
              api.stage.metricLatency({
                period: Duration.minutes(1),
                statistic: Stats.percentile(90),
                label: 'p90',
              }),
              api.stage.metricLatency({
                period: Duration.minutes(1),
                statistic: Stats.percentile(99),
                label: 'p99',
              }),
            ],
            leftAnnotations: [{ value: API_P90_LATENCY_ALARM_MS, label: 'p90 alarm' }],
            width,
            height,
          }),
          new GraphWidget({
            title: 'Latency: renderer duration (ms)',
            left: [
              fn.metricDuration({
                period: Duration.minutes(1),
                statistic: Stats.percentile(50),
                label: 'p50',
              }),
              fn.metricDuration({
                period: Duration.minutes(1),
                statistic: Stats.percentile(99),
                label: 'p99',
              }),
              fn.metricDuration({ period: Duration.minutes(1), statistic: Stats.MAXIMUM, label: 'max' }),
            ],
            leftAnnotations: [
              { value: timeoutMs, label: 'timeout' },
              { value: Math.floor(timeoutMs * NEAR_TIMEOUT_SHARE), label: 'near-timeout alarm' },
            ],
            width,
            height,
          }),
        ],
        [
          new GraphWidget({
            title: 'Saturation: concurrent renders and throttles',
            left: [
              fn.metric('ConcurrentExecutions', {
                period: Duration.minutes(1),
                statistic: Stats.MAXIMUM,
                label: 'Concurrent renders (max)',
              }),
            ],
            leftAnnotations:
              reserved === undefined ? [] : [{ value: reserved, label: 'reserved concurrency (cap)' }],
            right: [fn.metricThrottles({ period: Duration.minutes(1), label: 'Throttled renders' })],
            width,
            height,
          }),
          new GraphWidget({
            title: 'Errors: API 5xx rate (%)',
            left: [
              new MathExpression({
                expression: 'IF(requests > 0, 100 * errors / requests, 0)',
                usingMetrics: {
                  errors: api.stage.metricServerError({ period }),
                  requests: api.stage.metricCount({ period }),
                },
                label: '5xx (% of requests)',
                period,
              }),
            ],
            leftAnnotations: [{ value: 5, label: 'alarm (at 20+ requests)' }],
            width,
            height,
          }),
        ],
        ...(props.renderQueue ? [queueWidgets(props.renderQueue, width, height)] : []),
      ],
    });
  }
}

/** Async renders: what waits in the render queue, for how long, and what nobody could process. */
const queueWidgets = ({ queue, deadLetterQueue }: ServiceQueue, width: number, height: number) => {
  const period = Duration.minutes(1);
  return [
    new GraphWidget({
      title: 'Async renders: queued, in flight, dead-lettered',
      left: [
        queue.metricApproximateNumberOfMessagesVisible({ period, statistic: 'Maximum', label: 'Queued' }),
        queue.metricApproximateNumberOfMessagesNotVisible({
          period,
          statistic: 'Maximum',
          label: 'In flight',
        }),
        deadLetterQueue.metricApproximateNumberOfMessagesVisible({
          period,
          statistic: 'Maximum',
          label: 'DLQ',
        }),
      ],
      width,
      height,
    }),
    new GraphWidget({
      title: 'Async renders: age of the oldest queued message (s)',
      left: [queue.metricApproximateAgeOfOldestMessage({ period, statistic: 'Maximum', label: 'Oldest' })],
      width,
      height,
    }),
  ];
};
