import type { User } from './types.js';

/** The payload of a JWT, unverified: the server checks tokens, the browser only reads them. */
export function decodeJwt(token: string): User | null {
  try {
    const part = (token.split('.')[1] as string).replace(/-/g, '+').replace(/_/g, '/');
    const binary = atob(part);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    const payload = JSON.parse(new TextDecoder().decode(bytes));
    return payload && typeof payload === 'object' ? payload : null;
  } catch {
    return null;
  }
}
