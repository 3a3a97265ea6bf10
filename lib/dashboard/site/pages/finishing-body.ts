/**
 * The template editor's finishing options as data (issue 34; finishing-options.tsx shows them):
 * the fields as a saved template's `pdf_options` fills them, the body they send (only what was
 * given, as the API saves it), and the API's 422 field errors by field. No DOM, no JSX: the
 * unit tests read it (test/unit/dashboard-finishing-options.test.ts).
 */

import { FINISHING_FIELDS } from './saved-options.js';

/** The options this part of the editor owns, as a template's `pdf_options` holds them. */
export { FINISHING_FIELDS };

type FinishingField = (typeof FINISHING_FIELDS)[number];
export type FinishingBody = Partial<Record<FinishingField, Record<string, unknown>>>;

/** What the editor is told on every change: the body to send, and whether it differs from the saved one. */
export interface FinishingChange {
  readonly body: FinishingBody;
  readonly changed: boolean;
}

export const POSITIONS = [
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
export const MARK_DEFAULTS = {
  watermark: { font_size: 72, color: '#808080', opacity: 0.3, rotation_deg: 45 },
  stamp: { font_size: 24, color: '#c00000', opacity: 1, rotation_deg: 0 },
} as const;

export const MARK_NUMBERS = ['font_size', 'opacity', 'rotation_deg'] as const;
export const BOX = ['page', 'x', 'y', 'width', 'height'] as const;
export const SIGNATURE_TEXTS = ['reason', 'location', 'contact'] as const;

export interface MarkFields {
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

export interface SignatureFields {
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
    if (!(error instanceof Error) || !('details' in error) || !Array.isArray(error.details)) continue;
    const details = error.details as readonly { readonly field?: string; readonly issue?: string }[];
    for (const d of details) {
      const field = d.field?.replace(/^pdf_options\./, '');
      if (!field || !FINISHING_FIELDS.some((f) => field === f || field.startsWith(`${f}.`))) continue;
      if (!found.has(field)) found.set(field, d.issue ?? error.message);
    }
    // A failure the renderer names in its message only (`stamp.pages names page 5, but …`).
    if (details.length === 0) {
      const named = /^(watermark|stamp|signature)(\.[a-z_]+)?\b/.exec(error.message);
      if (named?.[0] && !found.has(named[0])) found.set(named[0], error.message);
    }
  }
  return found;
};
