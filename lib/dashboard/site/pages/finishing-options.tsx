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
import { ApiError, type ErrorDetail } from '../api.js';
import type { components } from '../api-types.js';
import { describeError } from '../components.js';
import { useDashboard } from '../context.js';

type SigningKey = components['schemas']['SigningKey'];

/** The options this part of the editor owns, as a template's `pdf_options` holds them. */
export const FINISHING_FIELDS = ['watermark', 'stamp', 'signature'] as const;
type FinishingField = (typeof FINISHING_FIELDS)[number];
export type FinishingBody = Partial<Record<FinishingField, Record<string, unknown>>>;

/** What the editor is told on every change: the body to send, and whether it differs from the saved one. */
export interface FinishingChange {
  readonly body: FinishingBody;
  readonly changed: boolean;
}

const POSITIONS = [
  'center',
  'top-left',
  'top',
  'top-right',
  'left',
  'right',
  'bottom-left',
  'bottom',
  'bottom-right',
] as const;

/** The API's defaults (functions/domain/renders/marks.ts MARK_DEFAULTS), shown as placeholders. */
const MARK_DEFAULTS = {
  watermark: { font_size: 72, color: '#808080', opacity: 0.3, rotation_deg: 45 },
  stamp: { font_size: 24, color: '#c00000', opacity: 1, rotation_deg: 0 },
} as const;

const MARK_NUMBERS = ['font_size', 'opacity', 'rotation_deg'] as const;
const BOX = ['page', 'x', 'y', 'width', 'height'] as const;
const SIGNATURE_TEXTS = ['reason', 'location', 'contact'] as const;

interface MarkFields {
  readonly on: boolean;
  readonly kind: 'text' | 'image';
  readonly text: string;
  /** A data: URI. */
  readonly image: string;
  readonly font_size: string;
  /** '' : the default. */
  readonly color: string;
  readonly opacity: string;
  readonly rotation_deg: string;
  readonly position: string;
  readonly pages: string;
}

interface SignatureFields {
  readonly key_id: string;
  readonly reason: string;
  readonly location: string;
  readonly contact: string;
  readonly visible: boolean;
  readonly box: Readonly<Record<(typeof BOX)[number], string>>;
}

export interface Fields {
  readonly watermark: MarkFields;
  readonly stamp: MarkFields;
  readonly signature: SignatureFields;
}

const str = (v: unknown): string => (v === undefined || v === null ? '' : String(v));

const markFields = (saved: Record<string, unknown> | undefined): MarkFields => ({
  on: saved !== undefined,
  kind: typeof saved?.image === 'string' ? 'image' : 'text',
  text: str(saved?.text),
  image: str(saved?.image),
  font_size: str(saved?.font_size),
  color: str(saved?.color),
  opacity: str(saved?.opacity),
  rotation_deg: str(saved?.rotation_deg),
  position: str(saved?.position),
  pages: str(saved?.pages),
});

const signatureFields = (saved: Record<string, unknown> | undefined): SignatureFields => {
  const box = (saved?.appearance ?? undefined) as Record<string, unknown> | undefined;
  return {
    key_id: str(saved?.key_id),
    reason: str(saved?.reason),
    location: str(saved?.location),
    contact: str(saved?.contact),
    visible: box !== undefined,
    box: {
      page: str(box?.page ?? 1),
      x: str(box?.x ?? 36),
      y: str(box?.y ?? 36),
      width: str(box?.width ?? 200),
      height: str(box?.height ?? 60),
    },
  };
};

/** A number field as sent: the number typed, or the text itself for the API to name (never a guess). */
const numberOf = (text: string): number | string => {
  const n = Number(text);
  return text.trim() !== '' && Number.isFinite(n) ? n : text;
};

/** A mark as sent: none until it has its text or image (a checked box alone asks for nothing yet). */
const markBody = (m: MarkFields): Record<string, unknown> | undefined => {
  const drawn = m.kind === 'text' ? { text: m.text } : { image: m.image };
  if (!m.on || Object.values(drawn)[0] === '') return undefined;
  const body: Record<string, unknown> = { ...drawn };
  for (const key of MARK_NUMBERS) if (m[key].trim() !== '') body[key] = numberOf(m[key]);
  if (m.color !== '') body.color = m.color;
  if (m.position !== '') body.position = m.position;
  if (m.pages.trim() !== '') body.pages = m.pages.trim();
  return body;
};

const signatureBody = (s: SignatureFields): Record<string, unknown> | undefined => {
  if (s.key_id === '') return undefined;
  const body: Record<string, unknown> = { key_id: s.key_id };
  for (const key of SIGNATURE_TEXTS) if (s[key] !== '') body[key] = s[key];
  if (s.visible) body.appearance = Object.fromEntries(BOX.map((k) => [k, numberOf(s.box[k])]));
  return body;
};

/** The fields as they show a saved template's options. */
export const fieldsOf = (saved: FinishingBody): Fields => ({
  watermark: markFields(saved.watermark),
  stamp: markFields(saved.stamp),
  signature: signatureFields(saved.signature),
});

export const finishingBody = (f: Fields): FinishingBody => {
  const body: FinishingBody = {};
  const watermark = markBody(f.watermark);
  const stamp = markBody(f.stamp);
  const signature = signatureBody(f.signature);
  if (watermark) body.watermark = watermark;
  if (stamp) body.stamp = stamp;
  if (signature) body.signature = signature;
  return body;
};

/** JSON with every object's keys sorted: the same options, in whatever order the API gives them back. */
export const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v,
  );

/**
 * The API's field errors (a 422's details) by the option's field, `pdf_options.` taken off (a
 * save names it, a preview does not).
 */
export const fieldErrors = (errors: readonly unknown[]): Map<string, string> => {
  const found = new Map<string, string>();
  for (const error of errors) {
    if (!(error instanceof ApiError)) continue;
    const details: readonly ErrorDetail[] = error.details;
    for (const d of details) {
      const field = d.field?.replace(/^pdf_options\./, '');
      if (!field || !FINISHING_FIELDS.some((f) => field === f || field.startsWith(`${f}.`))) continue;
      if (!found.has(field)) found.set(field, d.issue ?? error.message);
    }
    // A failure the renderer names in its message only (`stamp.pages names page 5, but …`).
    if (details.length === 0) {
      const named = /^(watermark|stamp|signature)(\.[a-z_]+)?\b/.exec(error.message);
      if (named?.[0] && !found.has(named[0])) found.set(named[0], describeError(error));
    }
  }
  return found;
};

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
