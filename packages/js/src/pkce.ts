import { LatchkeyError } from './errors.js';

export function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

/** 32 random bytes as base64url: 43 characters, 256 bits (RFC 7636 section 4.1). */
export function randomString(): string {
  return base64url(crypto.getRandomValues(new Uint8Array(32)));
}

/** RFC 7636 section 4.2: code_challenge = BASE64URL(SHA256(ASCII(code_verifier))). */
export async function s256(verifier: string): Promise<string> {
  if (!crypto.subtle) {
    throw new LatchkeyError(
      'insecure_context',
      'Sign-in needs a secure page: serve it over https (http works only on localhost)',
    );
  }
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier));
  return base64url(new Uint8Array(digest));
}
