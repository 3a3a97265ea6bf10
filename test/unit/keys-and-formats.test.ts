import { describe, expect, it } from 'vitest';
import { jobKey, rateWindowKey } from '../../functions/adapters/dynamodb/keys.js';
import { ConfigError, parsePlans } from '../../functions/core/config.js';
import { parsePage } from '../../functions/core/page-query.js';
import {
  apiKeyPrefix,
  generateApiKey,
  isWellFormedApiKey,
} from '../../functions/domain/accounts/api-key-format.js';
import { monthPeriod } from '../../functions/domain/accounts/usage.js';
import { minuteOf, monthOf } from '../../functions/domain/common/clock.js';
import { pdfObjectKey } from '../../functions/domain/jobs/jobs.js';

describe('API key format', () => {
  it('generates pdf_live_ keys of 40 characters that pass their own checksum', () => {
    const key = generateApiKey();
    expect(key).toMatch(/^pdf_live_[A-Za-z0-9]{40}$/);
    expect(isWellFormedApiKey(key)).toBe(true);
    expect(apiKeyPrefix(key)).toBe(key.slice(0, 16));
  });

  it('refuses a key with one character changed, without any lookup', () => {
    const key = generateApiKey();
    const i = 20;
    const typo = key.slice(0, i) + (key[i] === 'a' ? 'b' : 'a') + key.slice(i + 1);
    expect(isWellFormedApiKey(typo)).toBe(false);
    expect(isWellFormedApiKey('pdf_live_short')).toBe(false);
  });
});

describe('table keys', () => {
  it('keeps an account’s jobs in its partition, sortable by id', () => {
    expect(jobKey('acct-1', 'job_01')).toEqual({ PK: 'ACCOUNT#acct-1', SK: 'JOB#job_01' });
    expect(pdfObjectKey('acct-1', 'job_01')).toBe('pdf/acct-1/job_01.pdf');
  });

  it('aligns rate windows to the UTC minute and quotas to the UTC month', () => {
    const at = new Date('2026-11-30T23:59:59.900Z');
    expect(rateWindowKey('a', minuteOf(at)).SK).toBe(`RATE#${Math.floor(at.getTime() / 60000)}`);
    expect(monthOf(at)).toBe('2026-11');
    expect(monthPeriod(at)).toEqual({
      start: new Date('2026-11-01T00:00:00.000Z'),
      end: new Date('2026-12-01T00:00:00.000Z'),
    });
  });
});

describe('pagination', () => {
  it('defaults to 20 from 0 and checks the bounds', () => {
    expect(parsePage({})).toEqual({ limit: 20, offset: 0 });
    expect(parsePage({ limit: '100', offset: '5' })).toEqual({ limit: 100, offset: 5 });
    for (const query of [
      { limit: '0' },
      { limit: '101' },
      { limit: 'ten' },
      { offset: '-1' },
      { limit: '2.5' },
    ]) {
      expect(() => parsePage(query)).toThrowError(expect.objectContaining({ code: 'VALIDATION_ERROR' }));
    }
  });
});

describe('PLANS', () => {
  it('reads plans from JSON and insists on a free plan', () => {
    expect(parsePlans('{"free":{"monthlyRenders":5,"rendersPerMinute":1}}')).toEqual({
      free: { monthlyRenders: 5, rendersPerMinute: 1 },
    });
    expect(() => parsePlans('{"pro":{"monthlyRenders":5,"rendersPerMinute":1}}')).toThrow(ConfigError);
    expect(() => parsePlans('not json')).toThrow(/PLANS/);
    expect(() => parsePlans('{"free":{"monthlyRenders":-1,"rendersPerMinute":1}}')).toThrow(/free/);
  });
});
