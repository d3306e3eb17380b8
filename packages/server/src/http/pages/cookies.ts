import { hkdfSync } from 'node:crypto';

/** Whether `{auth_url}` is https: the pages' cookies are then Secure and `__Host-` prefixed. */
export const isSecure = (authUrl: string) => authUrl.startsWith('https:');

/**
 * The one rule for the pages' cookie names: `__Host-` under https (RFC 6265bis section
 * 4.1.3.2: Secure, Path=/, no Domain), so no subdomain or plain-http page can plant one.
 */
export const cookieName = (authUrl: string, name: string) =>
  `${isSecure(authUrl) ? '__Host-' : ''}${name}`;

/** The key that signs the pages' cookies, derived from the master secret. */
export const cookieSecret = (secret: string) =>
  Buffer.from(hkdfSync('sha256', secret, 'latchkey', 'latchkey cookies v1', 32)).toString('base64');
