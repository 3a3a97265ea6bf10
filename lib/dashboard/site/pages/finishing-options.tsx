/**
 * The template editor's finishing options (issue 34): a `watermark` (under the content), a `stamp`
 * (over it) and a `signature`, saved with the template's `pdf_options` as the API saves them (only
 * the fields given), and `protection`, which a template cannot keep (the API refuses it in
 * `pdf_options`: its passwords go with each render). Loaded with the later pages' chunk
 * (later.ts), so the first load does not carry it.
 *
 * The page checks nothing the API checks: what it sends is what was typed (a number field that is
 * not a number is sent as its text), and the API's 422 field errors, from a preview or a save, are
 * shown beside the field they name. The preview draws the watermark and the stamp (with its
 * PREVIEW mark over them); it is never signed.
 */
import { useEffect, useState } from 'preact/hooks';
import type { components } from '../api-types.js';
import { describeError } from '../components.js';
import { useDashboard } from '../context.js';
import {
  BOX,
  canonical,
  type Fields,
  type FinishingBody,
  type FinishingChange,
  fieldErrors,
  fieldsOf,
  finishingBody,
  MARK_DEFAULTS,
  MARK_NUMBERS,
  type MarkFields,
  POSITIONS,
  SIGNATURE_TEXTS,
  type SignatureFields,
} from './finishing-body.js';

export type { FinishingBody, FinishingChange } from './finishing-body.js';

type SigningKey = components['schemas']['SigningKey'];

const errorId = (field: string) => `tpl-${field.replaceAll('.', '-')}-error`;

/** The API's message for `field`, and what the control points at. */
const fieldError = (errors: Map<string, string>, field: string) => {
  const message = errors.get(field);
  return {
    message,
    aria: message ? { 'aria-invalid': true, 'aria-describedby': errorId(field) } : {},
    shown: message ? (
      <p class="error" id={errorId(field)} data-error-for={field}>
        {message}
      </p>
    ) : null,
  };
};

const readDataUri = (file: File): Promise<string> =>
  new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });

const MarkFieldset = ({
  kind,
  value,
  onChange,
  errors,
}: {
  kind: 'watermark' | 'stamp';
  value: MarkFields;
  onChange: (m: MarkFields) => void;
  errors: Map<string, string>;
}) => {
  const id = (name: string) => `tpl-${kind}-${name}`;
  const whole = fieldError(errors, kind);
  const text = fieldError(errors, `${kind}.text`);
  const image = fieldError(errors, `${kind}.image`);
  const pages = fieldError(errors, `${kind}.pages`);
  const color = fieldError(errors, `${kind}.color`);
  const position = fieldError(errors, `${kind}.position`);
  const defaults = MARK_DEFAULTS[kind];
  const label = kind === 'watermark' ? 'Watermark' : 'Stamp';
  return (
    <fieldset class="page-options" data-option={kind}>
      <legend>{label}</legend>
      <label class="check">
        <input
          type="checkbox"
          id={id('on')}
          checked={value.on}
          onChange={(e) => onChange({ ...value, on: e.currentTarget.checked })}
        />
        {kind === 'watermark'
          ? 'A watermark: text or an image under the page content'
          : 'A stamp: text or an image over the page content'}
      </label>
      {whole.shown}
      {value.on && (
        <>
          <div class="option-row">
            <div class="field">
              <label for={id('kind')}>Kind</label>
              <select
                id={id('kind')}
                value={value.kind}
                onChange={(e) => onChange({ ...value, kind: e.currentTarget.value as MarkFields['kind'] })}
              >
                <option value="text">Text</option>
                <option value="image">Image (PNG or JPEG)</option>
              </select>
            </div>
            {value.kind === 'text' ? (
              <div class="field">
                <label for={id('text')}>Text (Jinja2, with the sample data)</label>
                <input
                  id={id('text')}
                  value={value.text}
                  placeholder={kind === 'watermark' ? 'DRAFT' : 'PAID {{ paid_on }}'}
                  onInput={(e) => onChange({ ...value, text: e.currentTarget.value })}
                  {...text.aria}
                />
                {text.shown}
              </div>
            ) : (
              <div class="field">
                <label for={id('image')}>Image</label>
                <input
                  id={id('image')}
                  type="file"
                  accept="image/png,image/jpeg"
                  onChange={(e) => {
                    const file = e.currentTarget.files?.[0];
                    if (file)
                      readDataUri(file).then(
                        (uri) => onChange({ ...value, image: uri }),
                        () => {},
                      );
                  }}
                  {...image.aria}
                />
                {value.image !== '' && (
                  <p class="hint">An image of {Math.round(value.image.length / 1024)} KB as a data: URI.</p>
                )}
                {image.shown}
              </div>
            )}
          </div>
          <div class="option-row">
            {MARK_NUMBERS.map((key) => (
              <NumberField
                key={key}
                id={id(key)}
                field={`${kind}.${key}`}
                label={
                  key === 'font_size' ? 'Size (pt)' : key === 'opacity' ? 'Opacity (0–1)' : 'Rotation (°)'
                }
                value={value[key]}
                placeholder={String(defaults[key])}
                onInput={(v) => onChange({ ...value, [key]: v })}
                errors={errors}
              />
            ))}
            <div class="field">
              <label for={id('color')}>Colour</label>
              <input
                id={id('color')}
                type="color"
                value={value.color || defaults.color}
                onInput={(e) => onChange({ ...value, color: e.currentTarget.value })}
                {...color.aria}
              />
              {color.shown}
            </div>
          </div>
          <div class="option-row">
            <div class="field">
              <label for={id('position')}>Position</label>
              <select
                id={id('position')}
                value={value.position}
                onChange={(e) => onChange({ ...value, position: e.currentTarget.value })}
                {...position.aria}
              >
                <option value="">Centre (default)</option>
                {POSITIONS.filter((p) => p !== 'center').map((p) => (
                  <option key={p} value={p}>
                    {p}
                  </option>
                ))}
              </select>
              {position.shown}
            </div>
            <div class="field">
              <label for={id('pages')}>Pages</label>
              <input
                id={id('pages')}
                value={value.pages}
                placeholder="every page; e.g. 1-3,last"
                onInput={(e) => onChange({ ...value, pages: e.currentTarget.value })}
                {...pages.aria}
              />
              {pages.shown}
            </div>
          </div>
        </>
      )}
    </fieldset>
  );
};

const NumberField = ({
  id,
  field,
  label,
  value,
  placeholder,
  onInput,
  errors,
}: {
  id: string;
  field: string;
  label: string;
  value: string;
  placeholder?: string;
  onInput: (v: string) => void;
  errors: Map<string, string>;
}) => {
  const shown = fieldError(errors, field);
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input
        id={id}
        inputMode="decimal"
        value={value}
        placeholder={placeholder}
        onInput={(e) => onInput(e.currentTarget.value)}
        {...shown.aria}
      />
      {shown.shown}
    </div>
  );
};

const SignatureFieldset = ({
  value,
  onChange,
  errors,
}: {
  value: SignatureFields;
  onChange: (s: SignatureFields) => void;
  errors: Map<string, string>;
}) => {
  const { api } = useDashboard();
  const [keys, setKeys] = useState<readonly SigningKey[] | undefined>(undefined);
  const [keysError, setKeysError] = useState<unknown>(undefined);
  useEffect(() => {
    let live = true;
    api.request<SigningKey[]>('v1/signing-keys').then(
      (k) => live && setKeys(k),
      (e: unknown) => live && setKeysError(e),
    );
    return () => {
      live = false;
    };
  }, [api]);
  const whole = fieldError(errors, 'signature');
  const key = fieldError(errors, 'signature.key_id');
  const appearance = fieldError(errors, 'signature.appearance');
  // A saved key the list no longer has (deleted since) stays chosen, named by its id.
  const listed = keys?.some((k) => k.id === value.key_id) ?? false;
  return (
    <fieldset class="page-options" data-option="signature">
      <legend>Signature</legend>
      <div class="field">
        <label for="tpl-signature-key">Signing key</label>
        <select
          id="tpl-signature-key"
          value={value.key_id}
          onChange={(e) => onChange({ ...value, key_id: e.currentTarget.value })}
          {...key.aria}
        >
          <option value="">Not signed</option>
          {value.key_id !== '' && !listed && <option value={value.key_id}>{value.key_id}</option>}
          {keys?.map((k) => (
            <option key={k.id} value={k.id}>
              {k.name} ({k.certificate_subject})
            </option>
          ))}
        </select>
        {key.shown}
        {whole.shown}
        {keysError !== undefined && (
          <p class="error">The signing keys could not be listed: {describeError(keysError)}</p>
        )}
        <p class="hint">
          A PAdES signature (B-B) made with one of your account’s signing keys (<code>/v1/signing-keys</code>)
          on every render of this template. Previews are never signed.
        </p>
      </div>
      {value.key_id !== '' && (
        <>
          <div class="option-row">
            {SIGNATURE_TEXTS.map((name) => (
              <TextField
                key={name}
                field={`signature.${name}`}
                label={name === 'reason' ? 'Reason' : name === 'location' ? 'Location' : 'Contact'}
                value={value[name]}
                onInput={(v) => onChange({ ...value, [name]: v })}
                errors={errors}
              />
            ))}
          </div>
          <label class="check">
            <input
              type="checkbox"
              id="tpl-signature-visible"
              checked={value.visible}
              onChange={(e) => onChange({ ...value, visible: e.currentTarget.checked })}
            />
            A visible signature: a box showing who signed, when, the reason and location
          </label>
          {appearance.shown}
          {value.visible && (
            <div class="option-row">
              {BOX.map((name) => (
                <NumberField
                  key={name}
                  id={`tpl-signature-${name}`}
                  field={`signature.appearance.${name}`}
                  label={name === 'page' ? 'Page' : `${name[0]?.toUpperCase()}${name.slice(1)} (pt)`}
                  value={value.box[name]}
                  onInput={(v) => onChange({ ...value, box: { ...value.box, [name]: v } })}
                  errors={errors}
                />
              ))}
            </div>
          )}
        </>
      )}
    </fieldset>
  );
};

const TextField = ({
  field,
  label,
  value,
  onInput,
  errors,
}: {
  field: string;
  label: string;
  value: string;
  onInput: (v: string) => void;
  errors: Map<string, string>;
}) => {
  const id = `tpl-${field.replaceAll('.', '-')}`;
  const shown = fieldError(errors, field);
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input id={id} value={value} onInput={(e) => onInput(e.currentTarget.value)} {...shown.aria} />
      {shown.shown}
    </div>
  );
};

/**
 * The watermark, stamp and signature fields, and a word on protection. `saved`: the template's
 * saved finishing options (what `changed` is judged against); `errors`: the last save's and
 * preview's failures, whose field errors are shown here.
 */
export const FinishingOptions = ({
  saved,
  errors,
  onChange,
}: {
  saved: FinishingBody;
  errors: readonly unknown[];
  onChange: (change: FinishingChange) => void;
}) => {
  const [fields, setFields] = useState<Fields>(() => fieldsOf(saved));
  useEffect(() => {
    const body = finishingBody(fields);
    onChange({ body, changed: canonical(body) !== canonical(saved) });
  }, [fields, canonical(saved)]);
  const shown = fieldErrors(errors);
  return (
    <>
      <MarkFieldset
        kind="watermark"
        value={fields.watermark}
        onChange={(watermark) => setFields({ ...fields, watermark })}
        errors={shown}
      />
      <MarkFieldset
        kind="stamp"
        value={fields.stamp}
        onChange={(stamp) => setFields({ ...fields, stamp })}
        errors={shown}
      />
      <SignatureFieldset
        value={fields.signature}
        onChange={(signature) => setFields({ ...fields, signature })}
        errors={shown}
      />
      <fieldset class="page-options" data-option="protection">
        <legend>Password protection</legend>
        <p class="hint" data-field="protection-note">
          Passwords and permissions (<code>protection</code>) are not saved with a template: the API refuses
          them in its <code>pdf_options</code>, so that no password is ever stored. Give{' '}
          <code>protection</code> with each render, beside <code>template_id</code>, e.g.{' '}
          <code>
            {'"protection": {"owner_password": "…", "permissions": {"printing": "high", "copying": false}}'}
          </code>
          .
        </p>
      </fieldset>
    </>
  );
};
