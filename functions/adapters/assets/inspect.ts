/**
 * What an uploaded asset's bytes are (domain/assets/assets.ts, AssetInspector): the type is read
 * from the bytes (magic numbers), never taken from the Content-Type, and the two must agree.
 * Fonts are opened with fontkit (already in the renderer's bundle): a file with a font's magic but
 * no font behind it is refused. SVGs are parsed with libxml2 (libxml2-wasm, already used for
 * e-invoices; no DOCTYPE, so no entities and no external loads) and refused, not rewritten, when
 * they carry anything active or anything outside themselves: a script, an event attribute, a
 * foreignObject or other embedding element, a link or `url()` to anything but the file's own
 * fragments or an inline raster image, a stylesheet import or a processing instruction.
 *
 * Why refuse rather than sanitise: a sanitiser (DOMPurify) needs a DOM (jsdom, several MB in the
 * bundle) and changes what the designer sees; refused, the answer names what to remove, and the
 * file kept is exactly the file sent.
 */
import fontkit from '@cantoo/fontkit';
import { XmlDocument, XmlLibError } from 'libxml2-wasm';
import { type AssetType, isAssetType } from '../../domain/assets/assets.js';
import { ServiceError } from '../../domain/common/errors.js';

const invalid = (field: 'Content-Type' | 'body', issue: string, message: string) =>
  new ServiceError('INVALID_ASSET', message, { details: [{ field, issue }] });

const ACCEPTED = 'image/png, image/jpeg, image/webp, image/svg+xml, font/ttf, font/otf or font/woff2';

/** Names a client may send for the same type. */
const ALIASES: Readonly<Record<string, AssetType>> = {
  'image/jpg': 'image/jpeg',
  'image/svg': 'image/svg+xml',
  'application/x-font-ttf': 'font/ttf',
  'application/font-sfnt': 'font/ttf',
  'font/sfnt': 'font/ttf',
  'application/x-font-otf': 'font/otf',
  'application/font-woff2': 'font/woff2',
};

const starts = (bytes: Uint8Array, ...magic: number[]) => magic.every((b, i) => bytes[i] === b);
const ascii = (bytes: Uint8Array, at: number, text: string) =>
  [...text].every((c, i) => bytes[at + i] === c.charCodeAt(0));

/** The type the bytes are, by their first bytes; undefined for none of ours. */
export const sniff = (bytes: Uint8Array): AssetType | undefined => {
  if (starts(bytes, 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'image/png';
  if (starts(bytes, 0xff, 0xd8, 0xff)) return 'image/jpeg';
  if (ascii(bytes, 0, 'RIFF') && ascii(bytes, 8, 'WEBP')) return 'image/webp';
  if (ascii(bytes, 0, 'wOF2')) return 'font/woff2';
  if (ascii(bytes, 0, 'OTTO')) return 'font/otf';
  if (starts(bytes, 0x00, 0x01, 0x00, 0x00) || ascii(bytes, 0, 'true')) return 'font/ttf';
  // Text that begins (after a BOM, blanks, an XML declaration and comments) with an <svg element.
  const head = new TextDecoder('utf-8', { fatal: false }).decode(bytes.subarray(0, 4096));
  const rest = head
    .replace(/^\uFEFF/, '')
    .replace(/^\s*<\?xml[^>]*\?>/, '')
    .replace(/^(\s*<!--[\s\S]*?-->)*/, '')
    .trimStart();
  if (/^<svg[\s>]/.test(rest)) return 'image/svg+xml';
  return undefined;
};

const SVG_NS = 'http://www.w3.org/2000/svg';
const XLINK_NS = 'http://www.w3.org/1999/xlink';
/** Elements that run something or bring another document in. */
const ACTIVE_ELEMENTS = new Set([
  'script',
  'foreignObject',
  'iframe',
  'embed',
  'object',
  'audio',
  'video',
  'handler',
  'listener',
]);
/** A reference an SVG may keep: its own fragment, or an inline raster image. */
const LOCAL_REFERENCE = /^\s*(#|data:image\/(png|jpeg|gif|webp);)/i;
/** `url(...)` to anything but the file's own fragment. */
const FOREIGN_URL = /url\(\s*(?!['"]?\s*#)/i;

/** What makes an SVG refused, or undefined when it is self-contained and inert. */
export const svgProblem = (text: string): string | undefined => {
  if (/<!DOCTYPE|<!ENTITY/i.test(text)) return 'it declares a DOCTYPE or entities';
  let doc: XmlDocument;
  try {
    doc = XmlDocument.fromString(text);
  } catch (e) {
    if (!(e instanceof XmlLibError)) throw e;
    const first = e.details[0];
    return `it is not well-formed XML${first ? ` (line ${first.line}: ${first.message.trim()})` : ''}`;
  }
  try {
    const root = doc.root;
    if (root.name !== 'svg' || root.namespaceUri !== SVG_NS) return 'its root is not an <svg> element';
    if (doc.find('//processing-instruction()').length > 0) return 'it has a processing instruction (<?…?>)';
    for (const node of doc.find('//*')) {
      const element = node as unknown as { name: string; namespaceUri: string; content: string };
      const local = element.name.includes(':') ? (element.name.split(':').pop() ?? '') : element.name;
      if (element.namespaceUri !== SVG_NS) return `it has a <${element.name}> element outside SVG`;
      if (ACTIVE_ELEMENTS.has(local)) return `it has a <${local}> element`;
      if (local === 'style' && (/@import/i.test(element.content) || FOREIGN_URL.test(element.content)))
        return 'its <style> imports or refers to another file';
    }
    for (const node of doc.find('//@*')) {
      const attribute = node as unknown as { name: string; namespaceUri: string; value: string };
      const name = attribute.name.toLowerCase();
      if (name.startsWith('on')) return `it has an event attribute (${attribute.name})`;
      const reference = name === 'href' || name === 'src' || attribute.namespaceUri === XLINK_NS;
      if (reference && name.endsWith('href') && !LOCAL_REFERENCE.test(attribute.value))
        return `it refers to another file (${attribute.name}="${attribute.value.slice(0, 60)}")`;
      if (name === 'src') return `it refers to another file (src="${attribute.value.slice(0, 60)}")`;
      if (FOREIGN_URL.test(attribute.value) || /@import/i.test(attribute.value))
        return `it refers to another file in ${attribute.name}`;
      if (/^\s*javascript:/i.test(attribute.value)) return `it has a javascript: value in ${attribute.name}`;
    }
    return undefined;
  } finally {
    doc.dispose();
  }
};

const fontProblem = (bytes: Uint8Array): string | undefined => {
  try {
    const font = fontkit.create(Buffer.from(bytes)) as { numGlyphs?: number };
    return typeof font.numGlyphs === 'number' && font.numGlyphs > 0 ? undefined : 'it has no glyphs';
  } catch {
    return 'it is not a font fontkit can open';
  }
};

export const inspectAsset = async (bytes: Uint8Array, contentType: string): Promise<AssetType> => {
  const declared = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  const named = ALIASES[declared] ?? declared;
  if (!isAssetType(named)) {
    throw invalid(
      'Content-Type',
      `${declared || '(none)'} is not an asset type`,
      `Content-Type must be the file's type: ${ACCEPTED} (got ${declared || 'none'})`,
    );
  }
  if (bytes.byteLength === 0)
    throw invalid('body', 'is empty', 'The request body must be the file: it is empty');
  const found = sniff(bytes);
  if (found !== named) {
    throw invalid(
      'body',
      found ? `is ${found}, not ${named}` : `is not ${named}`,
      found
        ? `The file is ${found} by its content, but Content-Type says ${named}: send Content-Type: ${found}`
        : `The file is not ${named} by its content (nor any of ${ACCEPTED})`,
    );
  }
  const problem =
    found === 'image/svg+xml'
      ? svgProblem(new TextDecoder('utf-8').decode(bytes))
      : found.startsWith('font/')
        ? fontProblem(bytes)
        : undefined;
  if (problem) {
    const what = found === 'image/svg+xml' ? 'SVG' : 'font';
    throw invalid(
      'body',
      problem,
      found === 'image/svg+xml'
        ? `The SVG is refused: ${problem}. An asset SVG must be self-contained and inert: no scripts, event attributes, foreignObject, or links to other files (save it as "plain SVG", or as PNG)`
        : `The ${what} is refused: ${problem}`,
    );
  }
  return found;
};
