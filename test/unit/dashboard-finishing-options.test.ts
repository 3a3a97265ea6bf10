/**
 * The template editor's finishing options (issue 34; lib/dashboard/site/pages/finishing-body.ts):
 * what the fields send is what the API saves (a saved template reopens with nothing unsaved), a
 * number that is not one is sent as typed for the API to name, and the API's 422 field errors
 * find their fields, from a save (`pdf_options.` before them) or a preview.
 */
import { describe, expect, it } from 'vitest';
import {
  canonical,
  type FinishingBody,
  fieldErrors,
  fieldsOf,
  finishingBody,
} from '../../lib/dashboard/site/pages/finishing-body.js';

/** An error as the dashboard's client makes it from a 422 (api.ts ApiError: a message and the details). */
const answered = (message: string, details: readonly { field: string; issue: string }[] = []) =>
  Object.assign(new Error(message), { details });

describe("the editor's finishing options", () => {
  it('send back what a template saved, field for field', () => {
    const saved: FinishingBody = {
      watermark: { rotation_deg: 0, text: 'DRAFT', opacity: 0.5, position: 'bottom' },
      stamp: { image: 'data:image/png;base64,iVBORw0KGgo=', pages: '1-3,last', color: '#112233' },
      signature: {
        key_id: 'sk_01J',
        reason: 'Approved',
        appearance: { page: 2, x: 10, y: 20, width: 200, height: 60 },
      },
    };
    expect(canonical(finishingBody(fieldsOf(saved)))).toBe(canonical(saved));
    expect(finishingBody(fieldsOf({}))).toEqual({});
  });

  it('send a mark only once it has its text or image, and a number as typed when it is not one', () => {
    const fields = fieldsOf({});
    expect(finishingBody({ ...fields, stamp: { ...fields.stamp, on: true } })).toEqual({});
    const body = finishingBody({
      ...fields,
      stamp: { ...fields.stamp, on: true, text: 'PAID', font_size: 'big', opacity: '0.5' },
    });
    expect(body).toEqual({ stamp: { text: 'PAID', font_size: 'big', opacity: 0.5 } });
  });

  it("put the API's field errors by their field, from a save or a preview", () => {
    const save = answered('pdf_options.stamp.pages: bad', [
      { field: 'pdf_options.stamp.pages', issue: 'must be pages like 1-3,last' },
      { field: 'pdf_options.format', issue: 'not ours' },
    ]);
    const preview = answered('unknown key', [
      { field: 'signature.key_id', issue: 'is not one of your signing keys' },
    ]);
    const rendered = answered('watermark.pages names page 9, but the PDF has 1 page.');
    const errors = fieldErrors([save, preview, rendered, undefined, new Error('network')]);
    expect(Object.fromEntries(errors)).toEqual({
      'stamp.pages': 'must be pages like 1-3,last',
      'signature.key_id': 'is not one of your signing keys',
      'watermark.pages': 'watermark.pages names page 9, but the PDF has 1 page.',
    });
  });
});
