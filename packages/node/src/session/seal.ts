import { EncryptJWT, type JWTPayload, jwtDecrypt } from 'jose';

/** What a sealed cookie is for; each purpose has its own key, so one cannot pass for the other. */
export type SealPurpose = 'session' | 'transaction';

/**
 * Cookie contents as a JWE (`dir`, `A256GCM`: RFC 7516 with RFC 7518 section 5.3), under a
 * 256-bit key derived from the cookie secret with HKDF-SHA-256 (RFC 5869) through Web Crypto,
 * so it runs in edge runtimes as well as Node. Tampering or another secret fails to open.
 */
export class Sealer {
  readonly #keys = new Map<SealPurpose, Promise<Uint8Array>>();

  constructor(
    private readonly secret: string,
    private readonly now: () => number,
    /** What the keys are bound to: the issuer, the app and the cookie (one secret, many apps). */
    private readonly context = '',
  ) {}

  async seal(payload: JWTPayload, purpose: SealPurpose, expiresInSeconds: number): Promise<string> {
    const iat = Math.floor(this.now() / 1000);
    return new EncryptJWT(payload)
      .setProtectedHeader({ alg: 'dir', enc: 'A256GCM' })
      .setIssuedAt(iat)
      .setExpirationTime(iat + Math.ceil(expiresInSeconds))
      .encrypt(await this.#key(purpose));
  }

  /** The payload, or null when the value is not one we sealed for `purpose`, or has expired. */
  async open<T>(value: string, purpose: SealPurpose): Promise<T | null> {
    try {
      const { payload } = await jwtDecrypt(value, await this.#key(purpose), {
        keyManagementAlgorithms: ['dir'],
        contentEncryptionAlgorithms: ['A256GCM'],
        currentDate: new Date(this.now()),
      });
      return payload as T;
    } catch {
      return null;
    }
  }

  #key(purpose: SealPurpose): Promise<Uint8Array> {
    let key = this.#keys.get(purpose);
    if (!key) {
      key = deriveKey(this.secret, purpose, this.context);
      this.#keys.set(purpose, key);
    }
    return key;
  }
}

async function deriveKey(
  secret: string,
  purpose: SealPurpose,
  context: string,
): Promise<Uint8Array> {
  const encoder = new TextEncoder();
  const material = await crypto.subtle.importKey('raw', encoder.encode(secret), 'HKDF', false, [
    'deriveBits',
  ]);
  const bits = await crypto.subtle.deriveBits(
    {
      name: 'HKDF',
      hash: 'SHA-256',
      salt: encoder.encode('latchkey-cookie-session'),
      info: encoder.encode(`latchkey ${purpose} cookie A256GCM ${context}`),
    },
    material,
    256,
  );
  return new Uint8Array(bits);
}
