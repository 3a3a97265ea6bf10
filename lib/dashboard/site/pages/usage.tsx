/**
 * This month's usage: plan, quota used and left, the rate limit, PDF bytes and render time; the
 * plan's limits, and what the deployment says about changing plans (config.json's planContact).
 */
import type { Account, Usage } from '../api.js';
import { ErrorMessage, Loading, PageHeading, useAsync } from '../components.js';
import { useDashboard } from '../context.js';
import { formatBytes, formatDate, formatDateTime, formatDuration, formatNumber } from '../format.js';

/** An amount in its currency, as the browser's locale writes it (EUR 10.50, $5.00). */
const formatMoney = (amount: number, currency: string): string =>
  new Intl.NumberFormat(undefined, { style: 'currency', currency, maximumFractionDigits: 6 }).format(amount);

/** What the page says about changing plans when the deployment says nothing. */
const defaultPlanContact = (environment: 'aws' | 'local'): string =>
  environment === 'local'
    ? 'Plans are set by whoever runs the service; locally: npm run --silent admin -- set-plan --account <id> --plan <plan>.'
    : 'Plans are set by whoever runs this service: ask them for a plan with more room.';

export const UsagePage = () => {
  const { api, config } = useDashboard();
  const data = useAsync(
    () => Promise.all([api.request<Usage>('v1/usage'), api.request<Account>('v1/me')]),
    [api],
  );
  const [usage, account] = data.data ?? [];
  return (
    <>
      <PageHeading>Usage</PageHeading>
      <p>
        <button type="button" onClick={data.reload} disabled={data.loading}>
          Refresh
        </button>
      </p>
      {data.loading && !usage && <Loading what="usage" />}
      <ErrorMessage error={data.error} />
      {usage && account && (
        <>
          <section class="panel" aria-labelledby="quota-title">
            <h2 id="quota-title">Renders this month</h2>
            <label for="quota-meter">
              {formatNumber(usage.renders_used)} of {formatNumber(usage.renders_limit)} renders used,{' '}
              {formatNumber(usage.renders_remaining)} left
            </label>
            <meter
              id="quota-meter"
              min={0}
              max={Math.max(usage.renders_limit, 1)}
              value={usage.renders_used}
              low={usage.renders_limit * 0.75}
              high={usage.renders_limit * 0.9}
              optimum={0}
            />
            <p class="muted">
              Period {formatDate(usage.period_start)} to {formatDate(usage.period_end)} (UTC calendar month);
              the quota counts completed renders, and renders in progress.
            </p>
          </section>
          <section class="panel" aria-labelledby="plan-title">
            <h2 id="plan-title">
              Plan <span data-field="plan-name">{usage.plan}</span>
            </h2>
            <ul class="limits" data-field="plan-limits">
              <li>{formatNumber(usage.renders_limit)} renders a month</li>
              {usage.overage_limit > 0 && (
                <li>then up to {formatNumber(usage.overage_limit)} more, billed as overage</li>
              )}
              <li>
                {formatNumber(usage.rate_limit.limit)} renders per {usage.rate_limit.window_seconds} s at most
              </li>
            </ul>
            <p data-field="plan-contact">{config.planContact ?? defaultPlanContact(config.environment)}</p>
            <p class="muted">
              Your account id (for whoever changes plans): <code data-field="account-id">{account.id}</code>
            </p>
          </section>
          <dl class="facts">
            <div>
              <dt>Plan</dt>
              <dd data-field="plan">{usage.plan}</dd>
            </div>
            <div>
              <dt>Rate limit</dt>
              <dd data-field="rate-limit">
                {formatNumber(usage.rate_limit.limit)} renders per {usage.rate_limit.window_seconds} s,{' '}
                {formatNumber(usage.rate_limit.remaining)} left in this window
              </dd>
            </div>
            <div>
              <dt>Units this month</dt>
              <dd data-field="units">
                {formatNumber(usage.included_units)} included, {formatNumber(usage.overage_units)} overage
              </dd>
            </div>
            {usage.estimated_charge && (
              <div>
                <dt>Estimated charge</dt>
                <dd data-field="estimated-charge">
                  {formatMoney(usage.estimated_charge.total, usage.estimated_charge.currency)} (
                  {formatMoney(usage.estimated_charge.monthly_price, usage.estimated_charge.currency)} plan,{' '}
                  {formatMoney(usage.estimated_charge.overage_amount, usage.estimated_charge.currency)}{' '}
                  overage)
                </dd>
              </div>
            )}
            <div>
              <dt>PDF bytes this month</dt>
              <dd data-field="pdf-bytes">{formatBytes(usage.pdf_bytes)}</dd>
            </div>
            <div>
              <dt>Render time this month</dt>
              <dd data-field="render-time">{formatDuration(usage.render_ms)}</dd>
            </div>
            <div>
              <dt>Account</dt>
              <dd>
                {account.email ?? account.id}, since {formatDateTime(account.created_at)}
              </dd>
            </div>
          </dl>
        </>
      )}
    </>
  );
};
