/**
 * What the template editor saves as `pdf_options` (lib/dashboard/site/pages/saved-options.ts): a
 * PATCH replaces them whole, so the options the editor does not show (`pdf_a`, `e_invoice`, any
 * set through the API) go back as saved, and the fields' own replace those the editor edits.
 */
import { describe, expect, it } from 'vitest';
import { optionsToSave } from '../../lib/dashboard/site/pages/saved-options.js';

const PAGE = ['format', 'landscape', 'print_background', 'margins', 'paged_media', 'outline', 'tagged'];
const E_INVOICE = { profile: 'en16931', syntax: 'cii' };

describe("the editor's saved pdf_options", () => {
  it('send back every saved option the editor does not edit, unchanged, beside the fields', () => {
    const saved = {
      format: 'A5',
      pdf_a: '3b',
      e_invoice: E_INVOICE,
      watermark: { text: 'OLD' },
      stamp: { text: 'PAID' },
    };
    // The watermark edited, the stamp removed, the paper back to the default (so not sent).
    expect(optionsToSave(saved, PAGE, { watermark: { text: 'DRAFT' } })).toEqual({
      pdf_a: '3b',
      e_invoice: E_INVOICE,
      watermark: { text: 'DRAFT' },
    });
  });

  it('send null when nothing is left, and only the fields on a new template', () => {
    expect(optionsToSave({ format: 'A5', signature: { key_id: 'sk_1' } }, PAGE, {})).toBeNull();
    expect(optionsToSave(null, PAGE, {})).toBeNull();
    expect(optionsToSave(undefined, PAGE, { landscape: true })).toEqual({ landscape: true });
    expect(optionsToSave({ pdf_a: '2b' }, PAGE, {})).toEqual({ pdf_a: '2b' });
  });
});
