import type { LookupAddress } from 'node:dns';
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** How the dispatcher resolves a host: node's resolver (tests give their own, as DNS would). */
export type Resolve = (host: string) => Promise<LookupAddress[]>;

export const systemResolve: Resolve = (host) => dnsLookup(host, { all: true, verbatim: true });

/**
 * Whether an address may be the target of a production tenant's webhook: public unicast
 * only. Loopback, private (RFC 1918, unique local), link-local (cloud metadata at
 * 169.254.169.254 and fd00:ec2::254 among them), carrier-grade NAT, multicast, reserved and
 * unspecified addresses are refused, and so are the special IPv6 ranges that carry an IPv4
 * address (NAT64, 6to4, Teredo); an IPv4-mapped address is judged by its IPv4 address.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  return ipaddr.process(address).range() === 'unicast';
}

/** Why a URL cannot be a webhook endpoint of a tenant, or undefined if it can. */
export function urlProblem(raw: string, production: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'url must be an absolute http or https URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    return 'url must be an absolute http or https URL';
  if (url.username || url.password) return 'url must not hold a user name or password';
  if (url.hash) return 'url must not have a fragment';
  if (raw.length > 2048) return 'url must be at most 2048 characters';
  if (!production) return undefined;
  if (url.protocol !== 'https:') return 'a production endpoint must use https';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) && !isPublicAddress(host))
    return 'a production endpoint must not target a loopback, private or link-local address';
  if (host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.internal'))
    return 'a production endpoint must not target a loopback, private or link-local address';
  return undefined;
}

/**
 * Resolves the host of an attempt and returns the address to connect to, refusing (for a
 * production tenant) when any of its addresses is not public: the check is made on the
 * address the connection then uses, so a DNS change after the endpoint was saved cannot
 * slip past it.
 */
export async function resolveTarget(
  host: string,
  production: boolean,
  resolve: Resolve,
): Promise<LookupAddress> {
  const bare = host.replace(/^\[|\]$/g, '');
  const family = isIP(bare);
  const addresses = family ? [{ address: bare, family }] : await resolve(bare);
  const first = addresses[0];
  if (!first) throw new Error(`${host} has no address`);
  if (production) {
    const refused = addresses.find((a) => !isPublicAddress(a.address));
    if (refused)
      throw new RefusedAddress(`${host} resolves to ${refused.address}, which is not public`);
  }
  return first;
}

export class RefusedAddress extends Error {}
