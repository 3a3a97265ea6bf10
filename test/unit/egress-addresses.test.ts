/**
 * Which addresses a page may reach. IPv6 is allowed only in global unicast (2000::/3) outside
 * IANA's special-purpose blocks: every block of the IPv6 special-purpose registry, and every
 * spelling of an IPv4 address inside IPv6, is refused, at its first, a middle and its last address.
 */
import { describe, expect, it } from 'vitest';
import { isPublicAddress } from '../../functions/core/public-addresses.js';
import { createEgressPolicy } from '../../functions/renderer/egress.js';

// IANA IPv6 Special-Purpose Address Registry, plus the IPv6 space outside 2000::/3 that is not
// allocated for global unicast; each with addresses at its start, inside and at its end.
const NON_PUBLIC_V6: Record<string, readonly string[]> = {
  'unspecified ::/128': ['::'],
  'loopback ::1/128': ['::1', '0:0:0:0:0:0:0:1'],
  'IPv4-mapped ::ffff:0:0/96': ['::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:a9fe:a9fe', '::ffff:8.8.8.8'],
  'IPv4-translated ::ffff:0:0:0/96': ['::ffff:0:7f00:1', '::ffff:0:a9fe:a9fe', '::ffff:0:808:808'],
  'IPv4-compatible ::/96': ['::127.0.0.1', '::a9fe:a9fe', '::808:808'],
  'rest of ::/8': ['::1:0:0:1', '0:ff::1', '00ff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
  'NAT64 64:ff9b::/96': ['64:ff9b::', '64:ff9b::7f00:1', '64:ff9b::a9fe:a9fe', '64:ff9b::ffff:ffff'],
  'local NAT64 64:ff9b:1::/48': ['64:ff9b:1::', '64:ff9b:1:ffff:ffff:ffff:ffff:ffff'],
  'discard 100::/64': ['100::', '100::ffff:ffff:ffff:ffff'],
  'dummy 100:0:0:1::/64': ['100:0:0:1::1'],
  'IETF protocol assignments 2001::/23': ['2001::', '2001:1::1', '2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff'],
  'Teredo 2001::/32': ['2001:0:4136:e378:8000:63bf:3fff:fdd2'],
  'benchmarking 2001:2::/48': ['2001:2::1'],
  'AMT 2001:3::/32': ['2001:3::1'],
  'AS112-v6 2001:4:112::/48': ['2001:4:112::1'],
  'ORCHIDv2 2001:20::/28': ['2001:20::1', '2001:2f:ffff::1'],
  'drone remote ID 2001:30::/28': ['2001:30::1'],
  'documentation 2001:db8::/32': ['2001:db8::', '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff'],
  '6to4 2002::/16': [
    '2002::',
    '2002:7f00:1::',
    '2002:a9fe:a9fe::1',
    '2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
  ],
  'documentation 3fff::/20': ['3fff::', '3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff'],
  'SRv6 SIDs 5f00::/16': ['5f00::1'],
  'unique local fc00::/7': ['fc00::', 'fd00:ec2::254', 'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
  'link-local fe80::/10': ['fe80::', 'fe80::1', 'febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
  'site-local fec0::/10': ['fec0::1'],
  'multicast ff00::/8': ['ff02::1', 'ff0e::1', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
  'unallocated outside 2000::/3': [
    '4000::1',
    '8000::1',
    'e000::1',
    '1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
  ],
};

const PUBLIC_V6 = [
  '2001:4860:4860::8888',
  '2606:4700:4700::1111',
  '2a00:1450:4001::1',
  '2001:200::1',
  '2c0f:fb50::1',
];

describe('egress address policy', () => {
  it.each(Object.entries(NON_PUBLIC_V6))('refuses %s', (_block, addresses) => {
    for (const address of addresses) expect(isPublicAddress(address), address).toBe(false);
  });

  it('allows public IPv6 and IPv4 addresses', () => {
    for (const address of [...PUBLIC_V6, '8.8.8.8', '1.1.1.1'])
      expect(isPublicAddress(address), address).toBe(true);
  });

  it('refuses what is not an address at all, and addresses with a zone', () => {
    for (const address of ['', 'localhost', 'fe80::1%eth0', '2001:4860::1%1', '[::1]']) {
      expect(isPublicAddress(address), address).toBe(false);
    }
  });

  it('refuses IPv4-translated and other IPv6 spellings of loopback and metadata in URLs', async () => {
    const policy = createEgressPolicy({ lookup: async () => ['8.8.8.8'] });
    for (const host of [
      '[::ffff:0:7f00:1]',
      '[::ffff:0:a9fe:a9fe]',
      '[::ffff:127.0.0.1]',
      '[64:ff9b::a9fe:a9fe]',
      '[::1]',
    ]) {
      expect(await policy.isRequestAllowed(`http://${host}/`), host).toBe(false);
      expect(await policy.resolveDestination(host, 80), host).toBeUndefined();
    }
    expect(await policy.isRequestAllowed('http://[2606:4700:4700::1111]/')).toBe(true);
  });

  it('refuses a name whose addresses include any non-public IPv6 one', async () => {
    const policy = createEgressPolicy({ lookup: async () => ['2606:4700:4700::1111', '::ffff:0:7f00:1'] });
    expect(await policy.isRequestAllowed('https://example.test/')).toBe(false);
  });
});
