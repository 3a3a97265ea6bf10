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
