/**
 * The dashboard's security headers, one definition for CloudFront's response headers policy
 * (lib/dashboard/dashboard.ts) and for the local server (lib/local/dashboard.ts), so that what the
 * end-to-end test proves locally (no violation while every page is used) holds in the cloud.
 *
 * The Content-Security-Policy allows only the site's own scripts and styles (no inline code, no
 * eval), network calls to the API, the sign-in endpoints and the PDF bucket, and PDFs shown from
 * `blob:` URLs (the preview). The page is never framed.
 */

export interface CspSources {
  /** Origins (or host patterns) the page may fetch from besides its own: API, token endpoint, PDF bucket. */
  readonly connect: readonly string[];
}

/** Directive by directive, in the order they are sent. */
export const contentSecurityPolicyDirectives = ({ connect }: CspSources): [string, string][] => [
  ['default-src', "'none'"],
  ['script-src', "'self'"],
  // CodeMirror styles itself through constructed stylesheets, which style-src does not govern.
  ['style-src', "'self'"],
  ['img-src', "'self' data:"],
  ['font-src', "'self'"],
  ['connect-src', ["'self'", ...connect].join(' ')],
  // The preview: a PDF the page downloaded, shown from a blob: URL (a blob document inherits this
  // policy, and Chromium's PDF viewer inside it counts as a plugin, hence object-src).
  ['frame-src', 'blob:'],
  ['object-src', 'blob:'],
  ['manifest-src', "'self'"],
  ['base-uri', "'none'"],
  ['form-action', "'self'"],
  ['frame-ancestors', "'none'"],
];

export const contentSecurityPolicy = (sources: CspSources): string =>
  contentSecurityPolicyDirectives(sources)
    .map(([name, value]) => `${name} ${value}`)
    .join('; ');

/**
 * The inline styles of the API reference's viewer (@scalar/api-reference's standalone bundle, at
 * the exact version package.json pins): the <style> elements it inserts and the three style
 * attributes of its markup, by their SHA-256, as Chromium reported them when they were refused.
 * A new version whose CSS differs is refused the same way, and the reference page's browser test
 * (dashboard-reference.test.ts) names the hashes it would need.
 */
export const REFERENCE_STYLE_HASHES: readonly string[] = [
  'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=',
  'sha256-DLlkYCuDYGe6ME23YkUFB7Tc36rGDeo4mVBFbZX3uaU=',
  'sha256-S9PAA5rIziKwT98JNnc03/CbeMXMokQ0vMXopoxBu2I=',
  'sha256-ZW1GSuo0pKyEx5Ar7ZC5Dflb/mjatjeTW9aVx0iZAzE=',
  'sha256-d7niGYA9R/xp7r1pyc/+3ntTepKCabnrqd2exao76s4=',
  'sha256-im4bR8m0i9OTwS6FwAG4MKlk4URQdZkDu1Tx9kDpKNw=',
  'sha256-rO+6k1mDRASa9Q8IQu9I3bF+bjRdxDreAZCyGSaxzeI=',
  'sha256-v6FGbsebOHJ39qjwyswuNyhVylA7DHti/pqoiIvwbXQ=',
  // One more the viewer writes for this document, reported once the batches and webhooks routes joined it.
  'sha256-obYn56VDV21MhHVStJZRfjYypclWd6RpsOtKql5TrjI=',
  // And one for the document once the finishing options (watermark, stamp, protection, pdf_a,
  // e_invoice: issues 34 and 35) and merges (issue 36) joined it.
  'sha256-XpStNa4BYN0JJ6GCgxhCkaaB/OMuiO2PoQgWJD8Ya6o=',
  // And one for the document with signing keys and the signature option (issue 34, h-sign).
  'sha256-F0/rMvXlZaicoHD1WSHTNYehbxI2Cllpk56amnJp9UY=',
  // And one for the document with cancel, queue depth, file_name and batch items (issue 37, h-queue).
  'sha256-dbY21zBN0iLVUdNu5rGThACh85rR3V9idDbAu3vLUJo=',
  // And one for the document with destinations, deliveries, async merges and XRechnung (issues 35
  // and 36).
  'sha256-l6PWMw4ghGqKQ/IR/68OfORmWRM9O9bvf7rwIwqL4zQ=',
];

/**
 * The API reference page's policy: the dashboard's, with the viewer's own inline styles allowed by
 * hash (`'unsafe-hashes'` lets those hashes, and only those, match style attributes too) and nothing
 * framed or embedded. No 'unsafe-inline', no 'unsafe-eval', nothing from another origin but the API.
 */
export const referenceContentSecurityPolicyDirectives = (sources: CspSources): [string, string][] =>
  contentSecurityPolicyDirectives(sources).flatMap(([name, value]): [string, string][] => {
    if (name === 'style-src')
      return [[name, [value, "'unsafe-hashes'", ...REFERENCE_STYLE_HASHES.map((h) => `'${h}'`)].join(' ')]];
    if (name === 'frame-src' || name === 'object-src') return [[name, "'none'"]];
    return [[name, value]];
  });

export const referenceContentSecurityPolicy = (sources: CspSources): string =>
  referenceContentSecurityPolicyDirectives(sources)
    .map(([name, value]) => `${name} ${value}`)
    .join('; ');

/** Sent with every answer besides the CSP (and, on HTTPS, Strict-Transport-Security). */
export const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  // The page's URL carries the authorization code for a moment after sign-in: never send it on.
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=(), usb=()',
} as const;

/** Two years, as HSTS preload lists ask. */
export const HSTS_MAX_AGE_SECONDS = 63_072_000;
