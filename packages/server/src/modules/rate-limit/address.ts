import { isIPv6 } from 'node:net';

/**
 * The client address as rate limits count it. One IPv6 subscriber gets a whole /64 (RFC
 * 6177, RFC 7421), so counting each IPv6 address alone would multiply every limit by 2^64:
 * IPv6 addresses are counted by their /64. IPv4 (and IPv4-mapped IPv6) count alone.
 */
export function addressBucket(ip: string): string {
  if (!isIPv6(ip)) return ip;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped?.[1]) return mapped[1];
  const [head = '', tail = ''] = ip.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  // An embedded IPv4 tail takes two groups; it only ever lies in the host half.
  const rightGroups = right.reduce((n, part) => n + (part.includes('.') ? 2 : 1), 0);
  const groups = ip.includes('::')
    ? [...left, ...Array<string>(8 - left.length - rightGroups).fill('0'), ...right]
    : left;
  const prefix = groups.slice(0, 4).map((g) => Number.parseInt(g || '0', 16).toString(16));
  return `${prefix.join(':')}::/64`;
}
