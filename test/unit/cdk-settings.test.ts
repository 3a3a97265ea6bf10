/**
 * Deployment settings: checked at synth time, turned into the environment the handlers read,
 * and read from CDK context the way `cdk deploy -c key=value` and cdk.json deliver them.
 */
import { App } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { parsePlans, readLimits } from '../../functions/core/config.js';
import { ContextError, stackNameFromContext, stackPropsFromContext } from '../../lib/context-props.js';
import {
  API_GATEWAY_LIMIT_SECONDS,
  MAX_RENDER_BUDGET_MS,
  PDF_FUNCTION_TIMEOUT_SECONDS,
  resolveSettings,
  ServiceSettingsError,
} from '../../lib/service-settings.js';

describe('resolveSettings', () => {
  it('writes only what the infrastructure depends on when nothing is set', () => {
    const resolved = resolveSettings();
    expect(resolved.environment).toEqual({
      RENDER_BUDGET_MS: '25000',
      DOWNLOAD_URL_TTL_SECONDS: '900',
      PDF_RETENTION_DAYS: '30',
      MAX_RENDERED_HTML_BYTES: String(5 * 1024 * 1024),
      // The event source mapping's concurrency, which the cloud sets apart from the local default.
      ASYNC_CONCURRENCY: '10',
    });
    expect(resolved.rendererTimeoutSeconds).toBe(28);
    // The async budget (600 s) and the consumer's own minute: within Lambda's 900 s.
    expect(resolved.renderWorkerTimeoutSeconds).toBe(660);
  });

  it('writes the variables that functions/core/config.ts parses back to the same values', () => {
    const plans = {
      free: { monthlyRenders: 1, rendersPerMinute: 2 },
      pro: { monthlyRenders: 3, rendersPerMinute: 4 },
    };
    const limits = {
      maxInlineHtmlBytes: 11,
      maxRenderedHtmlBytes: 12,
      maxVariablesBytes: 13,
      maxRequestBodyBytes: 14,
      maxTemplateHtmlBytes: 15,
      maxPdfBytes: 16,
      maxPdfPages: 17,
    };
    const { environment } = resolveSettings({
      plans,
      limits,
      renderBudgetMs: 5000,
      downloadUrlTtlSeconds: 60,
      pdfRetentionDays: 2,
      usageLedgerRetentionDays: 500,
    });
    expect(parsePlans(environment.PLANS)).toEqual(plans);
    const saved = { ...process.env };
    try {
      Object.assign(process.env, environment);
      expect(readLimits()).toEqual({
        ...limits,
        renderBudgetMs: 5000,
        downloadUrlTtlSeconds: 60,
        pdfRetentionDays: 2,
        usageLedgerRetentionDays: 500,
        // Not set here: their defaults.
        jobLeaseSeconds: 30,
        sweepIntervalSeconds: 5,
        webhookTimeoutMs: 10_000,
        webhookFirstRetrySeconds: 30,
        webhookRetryWindowSeconds: 86_400,
        webhookOverdueSeconds: 900,
        asyncQueueLeaseSeconds: 21_600,
        asyncMaxAttempts: 3,
        asyncRetryBaseSeconds: 10,
        asyncRenderBudgetMs: 600_000,
        // Always written: the event source mapping's concurrency in the cloud.
        asyncConcurrency: 10,
      });
    } finally {
      for (const key of Object.keys(environment)) delete process.env[key];
      Object.assign(process.env, saved);
    }
  });

  it('fits the render budget, the renderer and the pdf function inside API Gateway’s limit', () => {
    expect(PDF_FUNCTION_TIMEOUT_SECONDS).toBeLessThan(API_GATEWAY_LIMIT_SECONDS);
    const { rendererTimeoutSeconds } = resolveSettings({ renderBudgetMs: MAX_RENDER_BUDGET_MS });
    expect(rendererTimeoutSeconds).toBeLessThan(PDF_FUNCTION_TIMEOUT_SECONDS);
    expect(() => resolveSettings({ renderBudgetMs: MAX_RENDER_BUDGET_MS + 1 })).toThrow(ServiceSettingsError);
  });

  it.each([
    [{ renderBudgetMs: 999 }, /renderBudgetMs/],
    [{ renderBudgetMs: 1500.5 }, /renderBudgetMs/],
    [{ downloadUrlTtlSeconds: 0 }, /downloadUrlTtlSeconds/],
    [{ downloadUrlTtlSeconds: 8 * 24 * 3600 }, /downloadUrlTtlSeconds/],
    [{ pdfRetentionDays: 0 }, /pdfRetentionDays/],
    [{ plans: { pro: { monthlyRenders: 1, rendersPerMinute: 1 } } }, /"free" plan/],
    [{ plans: { free: { monthlyRenders: -1, rendersPerMinute: 1 } } }, /plans\.free\.monthlyRenders/],
    [{ limits: { maxPdfPages: 0 } }, /limits\.maxPdfPages/],
    // Lambda's 6 MB invoke payload carries the rendered HTML to the renderer.
    [{ limits: { maxRenderedHtmlBytes: 6 * 1024 * 1024 } }, /limits\.maxRenderedHtmlBytes/],
  ])('refuses %j', (settings, message) => {
    expect(() => resolveSettings(settings)).toThrow(message);
  });
});

describe('stack props from CDK context', () => {
  const appWith = (context: Record<string, unknown>) => new App({ context });

  it('reads JSON values given as strings with -c, and objects from cdk.json', () => {
    const props = stackPropsFromContext(
      appWith({
        renderBudgetMs: '20000',
        retainData: 'false',
        plans: '{"free":{"monthlyRenders":5,"rendersPerMinute":1}}',
        limits: { maxPdfPages: 10 },
        alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:alarms',
        existingUserPoolId: 'eu-west-1_abc',
        existingUserPoolClientId: 'client',
      }).node,
    );
    expect(props).toMatchObject({
      renderBudgetMs: 20000,
      retainData: false,
      plans: { free: { monthlyRenders: 5, rendersPerMinute: 1 } },
      limits: { maxPdfPages: 10 },
      alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:alarms',
      existingUserPool: { userPoolId: 'eu-west-1_abc', userPoolClientId: 'client' },
    });
  });

  it('reads the edge settings: reserved concurrency or off, waf on or with settings, an alarm address', () => {
    const read = (context: Record<string, unknown>) => stackPropsFromContext(appWith(context).node);
    expect(read({ rendererReservedConcurrency: '50' }).rendererReservedConcurrency).toBe(50);
    expect(read({ rendererReservedConcurrency: 'false' }).rendererReservedConcurrency).toBe(false);
    expect(read({ rendererReservedConcurrency: 'none' }).rendererReservedConcurrency).toBe(false);
    expect(read({ waf: 'true' }).waf).toBe(true);
    expect(read({ waf: false }).waf).toBe(false);
    expect(read({ waf: '{"requestsPer5MinutesPerIp":500}' }).waf).toEqual({ requestsPer5MinutesPerIp: 500 });
    expect(read({ apiThrottle: '{"rateLimit":5,"burstLimit":10}' }).apiThrottle).toEqual({
      rateLimit: 5,
      burstLimit: 10,
    });
    expect(read({ alarmEmail: 'ops@example.com' }).alarmEmail).toBe('ops@example.com');
    expect(() => read({ rendererReservedConcurrency: 'lots' })).toThrow(/rendererReservedConcurrency/);
    expect(() => read({ waf: '500' })).toThrow(/waf/);
  });

  it('leaves unset settings undefined, so the defaults apply', () => {
    const props = stackPropsFromContext(appWith({}).node);
    expect(Object.values(props).every((v) => v === undefined)).toBe(true);
    expect(stackNameFromContext(appWith({}).node)).toBe('PdfRenderService');
    expect(stackNameFromContext(appWith({ stackName: 'Pdf-Staging' }).node)).toBe('Pdf-Staging');
  });

  it('names the context key that has the wrong type, or a user pool without its client', () => {
    expect(() => stackPropsFromContext(appWith({ renderBudgetMs: 'soon' }).node)).toThrow(ContextError);
    expect(() => stackPropsFromContext(appWith({ plans: '[1]' }).node)).toThrow(/plans/);
    expect(() => stackPropsFromContext(appWith({ existingUserPoolId: 'eu-west-1_abc' }).node)).toThrow(
      /existingUserPoolClientId/,
    );
  });
});
