/**
 * Which network destinations are public: the one address classification behind every outbound
 * connection the service makes on a caller's behalf (a rendered page's requests,
 * functions/renderer/egress.ts; a webhook delivery, functions/adapters/http/webhook-client.ts).
 * Callers control those URLs, so each is server-side request forgery waiting to happen: the
 * Lambda runtime API (127.0.0.1:9001), the metadata service, the local stack's emulators and
 * whatever a VPC can see are all one URL away.
 *
 * A name is judged by every address it resolves to, and the caller then connects to the very
 * address that was judged, so DNS rebinding between the check and the connection does not work.
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
/**
 * IPv6 is judged by allowing what is safe rather than blocking what is known: only global
 * unicast (2000::/3) can be public. Everything outside it is not: the unspecified and loopback
 * addresses, IPv4-mapped (::ffff:0:0/96) and IPv4-translated (::ffff:0:0:0/96) forms and the
 * rest of ::/8, NAT64 (64:ff9b::/96, 64:ff9b:1::/48), discard (100::/64), unique local, link-local,
 * site-local, multicast, SRv6 SIDs (5f00::/16), and whatever IANA assigns there next.
 */
const globalUnicast = new BlockList();
globalUnicast.addSubnet('2000::', 3, 'ipv6');
/** IANA's special-purpose blocks inside 2000::/3. */
const nonPublicGlobalUnicast = new BlockList();
for (const [net, prefix] of [
  ['2001::', 23], // IETF protocol assignments: Teredo, benchmarking, ORCHID, AMT, …
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4: embeds any IPv4 address
  ['3fff::', 20], // documentation (RFC 9637)
] as const) {
  nonPublicGlobalUnicast.addSubnet(net, prefix, 'ipv6');
}

const isPublicIpv6 = (address: string): boolean => {
  // A zone id names an interface of this machine: never a destination.
  if (address.includes('%')) return false;
  try {
    return globalUnicast.check(address, 'ipv6') && !nonPublicGlobalUnicast.check(address, 'ipv6');
  } catch {
    return false; // a form BlockList cannot read is not trusted
  }
};

/** Whether an IP address (v4 or v6, without brackets) is globally routable. */
export const isPublicAddress = (address: string): boolean => {
  const family = isIP(address);
  if (family === 4) return !nonPublic.check(address, 'ipv4');
  if (family === 6) return isPublicIpv6(address);
  return false;
};

/** `dns.lookup(host, {all: true})`: every address the host resolves to. */
export type LookupAll = (hostname: string) => Promise<readonly string[]>;

export const systemLookup: LookupAll = async (hostname) =>
  (await dnsLookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

/** Why a destination is refused. */
export type DestinationRefusal = 'invalid URL' | 'invalid port' | 'private address' | 'host not found';

export type Destination = { readonly address: string } | { readonly refused: DestinationRefusal };

export interface DestinationOptions {
  /** `host:port` pairs reachable although not public (tests and local fixtures only). */
  readonly allowHosts?: readonly string[];
  /** Resolver; the system's by default. */
  readonly lookup?: LookupAll;
}

/**
 * Whether host:port (the host as a URL spells it) is one of `allowHosts`: a test's or the local
 * stack's allowance, matched as the resolver matches it (case and a trailing dot ignored).
 */
export const createHostAllowance = (
  allowHosts: readonly string[] | undefined,
): ((host: string, port: number) => boolean) => {
  const allowed = new Set(allowHosts?.map((h) => h.toLowerCase()) ?? []);
  return (host, port) => allowed.has(`${host.toLowerCase().replace(/\.$/, '')}:${port}`);
};

/**
 * The address to connect to for host:port (the host as a URL spells it, IPv6 in brackets), or why
 * there is none. Connect to the returned address only: that is what makes the check hold.
 */
export const createDestinationResolver = (
  options: DestinationOptions = {},
): ((host: string, port: number) => Promise<Destination>) => {
  const allowed = createHostAllowance(options.allowHosts);
  const lookup = options.lookup ?? systemLookup;
  return async (host, port) => {
    const name = host.toLowerCase().replace(/\.$/, '');
    if (name === '') return { refused: 'invalid URL' };
    if (!Number.isInteger(port) || port < 1 || port > 65535) return { refused: 'invalid port' };
    if (allowed(name, port)) return { address: name.replace(/^\[(.*)\]$/, '$1') };
    const literal = name.replace(/^\[(.*)\]$/, '$1');
    if (isIP(literal) !== 0)
      return isPublicAddress(literal) ? { address: literal } : { refused: 'private address' };
    if (name === 'localhost' || name.endsWith('.localhost')) return { refused: 'private address' };
    let addresses: readonly string[];
    try {
      addresses = await lookup(name);
    } catch {
      return { refused: 'host not found' }; // does not resolve: nothing to connect to
    }
    if (addresses.length === 0) return { refused: 'host not found' };
    // Every address must be public: a name that also resolves to a private address is refused,
    // whichever one a client would have picked.
    if (!addresses.every(isPublicAddress)) return { refused: 'private address' };
    return { address: addresses[0] as string };
  };
};
