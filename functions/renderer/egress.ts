/**
 * Where a page may reach. Rendered HTML is caller-controlled, so every request it makes is
 * server-side request forgery waiting to happen: it runs next to the Lambda runtime API
 * (127.0.0.1:9001), the local stack's dynalite and s3rver, and whatever a VPC can see. Pages may
 * use data:, blob: and about: URLs, and http(s)/ws(s) to hosts whose every address is public.
 *
 * Which addresses are public is decided in core/public-addresses.ts, shared with the webhook sender.
 * The policy is applied twice: by request interception (interception.ts: refuses early, sees
 * schemes and navigations) and by the egress proxy that all of Chromium's connections go through
 * (egress-proxy.ts: sees WebSockets too, and connects to the very address it checked, so DNS
 * rebinding between check and connect does not work).
 */
import { createDestinationResolver, type LookupAll } from '../core/public-addresses.js';

const SCHEMES_WITHOUT_NETWORK = new Set(['data:', 'blob:', 'about:']);
const NETWORK_SCHEMES = new Set(['http:', 'https:', 'ws:', 'wss:']);
const DEFAULT_PORTS: Readonly<Record<string, number>> = {
  'http:': 80,
  'ws:': 80,
  'https:': 443,
  'wss:': 443,
};

/**
 * Why a URL is refused, as a render's diagnostics show it (`blocked: <reason>`). One reason for
 * every refusal of the policy: a private address, a name that does not resolve, another scheme or
 * a bad port all read the same, so that a page cannot learn how the renderer's resolver sees
 * internal names (issue 38). `offline` is the render's own choice, known to its caller.
 */
export const NOT_PUBLIC = 'not a public http(s) address';
export type EgressRefusal = typeof NOT_PUBLIC | 'offline';

export type EgressVerdict =
  | { readonly allowed: true }
  | { readonly allowed: false; readonly reason: EgressRefusal };

export interface EgressPolicy {
  /** Whether the page may fetch or navigate to this URL. Never throws. */
  isRequestAllowed(url: string): Promise<boolean>;
  /** The same decision, with the reason for a refusal. Never throws. */
  check(url: string): Promise<EgressVerdict>;
  /**
   * The address to open a connection to for host:port, or undefined when it is refused. The
   * host as a URL spells it (IPv6 in brackets); the proxy connects to the returned address only.
   */
  resolveDestination(host: string, port: number): Promise<string | undefined>;
}

export interface EgressPolicyOptions {
  /** `host:port` pairs reachable although not public (tests and local fixtures only). */
  readonly allowHosts?: readonly string[];
  /** Resolver; the system's by default. */
  readonly lookup?: LookupAll;
}

export const createEgressPolicy = (options: EgressPolicyOptions = {}): EgressPolicy => {
  const destination = createDestinationResolver(options);

  const resolveDestination = async (host: string, port: number): Promise<string | undefined> => {
    const found = await destination(host, port);
    return 'address' in found ? found.address : undefined;
  };

  const check = async (url: string): Promise<EgressVerdict> => {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return { allowed: false, reason: NOT_PUBLIC };
    }
    if (SCHEMES_WITHOUT_NETWORK.has(parsed.protocol)) return { allowed: true };
    // file:, ftp:, chrome:, filesystem:, …
    if (!NETWORK_SCHEMES.has(parsed.protocol)) return { allowed: false, reason: NOT_PUBLIC };
    const port = parsed.port === '' ? DEFAULT_PORTS[parsed.protocol] : Number(parsed.port);
    const found = await destination(parsed.hostname, port ?? 0);
    return 'address' in found ? { allowed: true } : { allowed: false, reason: NOT_PUBLIC };
  };

  const isRequestAllowed = async (url: string): Promise<boolean> => (await check(url)).allowed;

  return { isRequestAllowed, check, resolveDestination };
};

const defaultPolicy = createEgressPolicy();

/** The policy without test allowances: may a page fetch or navigate to this URL? */
export const isRequestAllowed = (url: string): Promise<boolean> => defaultPolicy.isRequestAllowed(url);

/**
 * The policy of an offline render (RenderRequest.offline): nothing is reachable, and nothing is
 * looked up. Its egress proxy refuses every connection with it.
 */
export const refuseAllPolicy: EgressPolicy = {
  isRequestAllowed: async () => false,
  check: async () => ({ allowed: false, reason: 'offline' }),
  resolveDestination: async () => undefined,
};
