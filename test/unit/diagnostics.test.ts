/** The caps on a render's diagnostics (functions/domain/jobs/diagnostics.ts). */
import { describe, expect, it } from 'vitest';
import {
  DiagnosticsRecorder,
  MAX_DIAGNOSTIC_ENTRIES,
  MAX_DIAGNOSTIC_MESSAGE_CHARACTERS,
  MAX_DIAGNOSTIC_URL_CHARACTERS,
  MAX_DIAGNOSTICS_BYTES,
} from '../../functions/domain/jobs/diagnostics.js';
import { diagnosticsSchema } from '../../functions/pdf/schemas.js';

const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

describe('DiagnosticsRecorder', () => {
  it('keeps entries in the order they first happened, and counts repeats instead of adding them', () => {
    const r = new DiagnosticsRecorder();
    r.add('console', 'boom');
    r.add('resource', 'blocked: private address', 'http://10.0.0.1/a.png');
    for (let i = 0; i < 1000; i++) r.add('console', 'boom');
    expect(r.result()).toEqual({
      entries: [
        { type: 'console', message: 'boom', count: 1001 },
        { type: 'resource', message: 'blocked: private address', url: 'http://10.0.0.1/a.png', count: 1 },
      ],
      truncated: false,
    });
  });

  it(`stops at ${MAX_DIAGNOSTIC_ENTRIES} entries, saying so`, () => {
    const r = new DiagnosticsRecorder();
    for (let i = 0; i < 200; i++) r.add('console', `error ${i}`);
    const result = r.result();
    expect(result.entries).toHaveLength(MAX_DIAGNOSTIC_ENTRIES);
    expect(result.entries.at(-1)?.message).toBe(`error ${MAX_DIAGNOSTIC_ENTRIES - 1}`);
    expect(result.truncated).toBe(true);
    expect(() => diagnosticsSchema.strict().parse(result)).not.toThrow();
  });

  it('keeps room for a closing entry (what a page dropped) when asked to, however full it gets', () => {
    const r = new DiagnosticsRecorder({ closingEntry: true });
    for (let i = 0; i < 200; i++) r.add('console', `error ${i} ${'x'.repeat(400)}`);
    r.close('console', '48,700 console errors and uncaught errors were dropped');
    const result = r.result();
    expect(result.entries.at(-1)).toEqual({
      type: 'console',
      message: '48,700 console errors and uncaught errors were dropped',
      count: 1,
    });
    expect(result.entries.length).toBeLessThanOrEqual(MAX_DIAGNOSTIC_ENTRIES);
    expect(jsonBytes(result)).toBeLessThanOrEqual(MAX_DIAGNOSTICS_BYTES);
    expect(result.truncated).toBe(true);
  });

  it(`stays within ${MAX_DIAGNOSTICS_BYTES} bytes as JSON, whatever the entries weigh and count`, () => {
    const r = new DiagnosticsRecorder();
    for (let i = 0; i < 100; i++) {
      r.add('resource', `failed: ${i} ${'€'.repeat(600)}`, `https://example.com/${i}/${'q'.repeat(400)}`);
    }
    for (let i = 0; i < 100_000; i++)
      r.add('resource', `failed: 0 ${'€'.repeat(600)}`, `https://example.com/0/${'q'.repeat(400)}`);
    const result = r.result();
    expect(result.truncated).toBe(true);
    expect(result.entries.length).toBeGreaterThan(5);
    expect(jsonBytes(result)).toBeLessThanOrEqual(MAX_DIAGNOSTICS_BYTES);
    expect(result.entries[0]?.count).toBe(100_001);
  });

  it('cuts long text and URLs, and replaces control characters and unpaired surrogates', () => {
    const r = new DiagnosticsRecorder();
    r.add('console', `${'x'.repeat(10 * 1024 * 1024)}`);
    r.add('resource', 'failed: net::ERR_FAILED', `data:image/png;base64,${'A'.repeat(100_000)}`);
    r.add('page_error', 'line 1\nline 2\u0000\u001b[31m \ud800 end');
    const [long, url, control] = r.result().entries;
    expect([...(long?.message ?? '')]).toHaveLength(MAX_DIAGNOSTIC_MESSAGE_CHARACTERS + 1);
    expect(long?.message.endsWith('…')).toBe(true);
    expect([...(url?.url ?? '')]).toHaveLength(MAX_DIAGNOSTIC_URL_CHARACTERS + 1);
    expect(control?.message).toBe('line 1 line 2 [31m \ufffd end');
  });

  it('takes nothing once its result is read', () => {
    const r = new DiagnosticsRecorder();
    r.add('console', 'before');
    const result = r.result();
    r.add('console', 'after');
    r.truncate();
    expect(r.result()).toEqual(result);
  });
});
