/**
 * Where a page may reach. Rendered HTML is caller-controlled, so every request it makes is
 * server-side request forgery waiting to happen: it runs next to the Lambda runtime API
 * (127.0.0.1:9001), the local stack's dynalite and s3rver, and whatever a VPC can see. Pages may
 * use data:, blob: and about: URLs, and http(s)/ws(s) to hosts whose every address is public.
 *
 * The policy is applied twice: by request interception (interception.ts: refuses early, sees
 * schemes and navigations) and by the egress proxy that all of Chromium's connections go through
 * (egress-proxy.ts: sees WebSockets too, and connects to the very address it checked, so DNS
 * rebinding between check and connect does not work).
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/** Address ranges that are not globally routable (IANA special-purpose registries). */
const nonPublic = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this network", including 0.0.0.0
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, including the 169.254.169.254 metadata service
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, including 255.255.255.255
] as const) {
  nonPublic.addSubnet(net, prefix, 'ipv4');
}
// BlockList checks IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) against the IPv4 rules above.
for (const [net, prefix] of [
  ['::', 96], // unspecified, loopback (::1) and the deprecated IPv4-compatible form
  ['64:ff9b::', 96], // NAT64: would reach IPv4 space through a gateway
  ['64:ff9b:1::', 48],
  ['100::', 64], // discard
  ['2001::', 23], // protocol assignments, including Teredo
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4: embeds any IPv4 address
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  nonPublic.addSubnet(net, prefix, 'ipv6');
}

/** Whether an IP address (v4 or v6, without brackets) is globally routable. */
export const isPublicAddress = (address: string): boolean => {
  const family = isIP(address);
  if (family === 0) return false;
  return !nonPublic.check(address, family === 4 ? 'ipv4' : 'ipv6');
};

/** `dns.lookup(host, {all: true})`: every address the host resolves to. */
export type LookupAll = (hostname: string) => Promise<readonly string[]>;

const systemLookup: LookupAll = async (hostname) =>
  (await dnsLookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

const SCHEMES_WITHOUT_NETWORK = new Set(['data:', 'blob:', 'about:']);
const NETWORK_SCHEMES = new Set(['http:', 'https:', 'ws:', 'wss:']);
const DEFAULT_PORTS: Readonly<Record<string, number>> = {
  'http:': 80,
  'ws:': 80,
  'https:': 443,
  'wss:': 443,
};

export interface EgressPolicy {
  /** Whether the page may fetch or navigate to this URL. Never throws. */
  isRequestAllowed(url: string): Promise<boolean>;
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
  const allowHosts = new Set(options.allowHosts?.map((h) => h.toLowerCase()) ?? []);
  const lookup = options.lookup ?? systemLookup;

  const resolveDestination = async (host: string, port: number): Promise<string | undefined> => {
    const name = host.toLowerCase().replace(/\.$/, '');
    if (name === '' || !Number.isInteger(port) || port < 1 || port > 65535) return undefined;
    if (allowHosts.has(`${name}:${port}`)) return name.replace(/^\[(.*)\]$/, '$1');
    const literal = name.replace(/^\[(.*)\]$/, '$1');
    if (isIP(literal) !== 0) return isPublicAddress(literal) ? literal : undefined;
    if (name === 'localhost' || name.endsWith('.localhost')) return undefined;
    let addresses: readonly string[];
    try {
      addresses = await lookup(name);
    } catch {
      return undefined; // does not resolve: nothing to connect to
    }
    // Every address must be public: a name that also resolves to a private address is refused,
    // whichever one a client would have picked.
    if (addresses.length === 0 || !addresses.every(isPublicAddress)) return undefined;
    return addresses[0];
  };

  const isRequestAllowed = async (url: string): Promise<boolean> => {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return false;
    }
    if (SCHEMES_WITHOUT_NETWORK.has(parsed.protocol)) return true;
    if (!NETWORK_SCHEMES.has(parsed.protocol)) return false; // file:, ftp:, chrome:, filesystem:, …
    const port = parsed.port === '' ? DEFAULT_PORTS[parsed.protocol] : Number(parsed.port);
    return (await resolveDestination(parsed.hostname, port ?? 0)) !== undefined;
  };

  return { isRequestAllowed, resolveDestination };
};

const defaultPolicy = createEgressPolicy();

/** The policy without test allowances: may a page fetch or navigate to this URL? */
export const isRequestAllowed = (url: string): Promise<boolean> => defaultPolicy.isRequestAllowed(url);
