import type { User } from './types.js';

/** The payload of a JWT, unverified: the server checks tokens, the browser only reads them. */
export function decodeJwt(token: string): User | null {
  try {
    const part = (token.split('.')[1] as string).replace(/-/g, '+').replace(/_/g, '/');
    const bytes = Uint8Array.from(atob(part), (c) => c.charCodeAt(0));
    const payload = JSON.parse(new TextDecoder().decode(bytes));
    return payload && typeof payload === 'object' ? payload : null;
  } catch {
    return null;
  }
}
