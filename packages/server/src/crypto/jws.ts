import { type KeyObject, sign } from 'node:crypto';

/**
 * A compact JWS (RFC 7515 section 7.1) signed RS256 (RSASSA-PKCS1-v1_5 with SHA-256, RFC 7518
 * section 3.3) with a node:crypto private KeyObject, in one synchronous `crypto.sign`. jose's
 * SignJWT does the same through WebCrypto: a CryptoKey, a promise and a crypto job per token,
 * with more of the event loop's time spent around the same RSA operation.
 */
export function signRs256(
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
  key: KeyObject,
): string {
  const input = `${base64url(header)}.${base64url(payload)}`;
  return `${input}.${sign('sha256', Buffer.from(input), key).toString('base64url')}`;
}

const base64url = (value: Record<string, unknown>) =>
  Buffer.from(JSON.stringify(value)).toString('base64url');
