import { hkdfSync } from 'node:crypto';
import { CompactEncrypt, compactDecrypt } from 'jose';
import type { Kysely } from 'kysely';
import type { Schema } from '../storage/index.js';

/** A value sealed by a SecretBox, with what it was sealed for, and the row that holds it. */
export interface Sealed {
  id: string;
  jwe: string;
  purpose: string;
  subject: string;
}

/**
 * A column of sealed values, owned by its module: read whole when the master secret is
 * checked or rotated, written when it is rotated.
 */
export interface SealedStore {
  /** What the values are, for messages ("signing keys"). */
  what: string;
  list(db: Kysely<Schema>): Promise<Sealed[]>;
  replace(db: Kysely<Schema>, id: string, jwe: string): Promise<void>;
}

/**
 * Encrypts small secrets at rest (signing keys, provider secrets) as compact JWE
 * (`dir` + A256GCM, RFC 7516/7518) under a key derived from LATCHKEY_SECRET with HKDF
 * (RFC 5869). The `purpose` and `subject` go into the authenticated protected header, so
 * a ciphertext moved to another tenant or another use does not decrypt.
 */
export class SecretBox {
  readonly #key: Uint8Array;

  constructor(masterSecret: string) {
    this.#key = new Uint8Array(
      hkdfSync('sha256', masterSecret, 'latchkey', 'latchkey secret-box v1', 32),
    );
  }

  async seal(plaintext: string, purpose: string, subject: string): Promise<string> {
    return new CompactEncrypt(new TextEncoder().encode(plaintext))
      .setProtectedHeader({ alg: 'dir', enc: 'A256GCM', purpose, sub: subject })
      .encrypt(this.#key);
  }

  async open(jwe: string, purpose: string, subject: string): Promise<string> {
    const { plaintext, protectedHeader } = await compactDecrypt(jwe, this.#key, {
      keyManagementAlgorithms: ['dir'],
      contentEncryptionAlgorithms: ['A256GCM'],
    });
    if (protectedHeader.purpose !== purpose || protectedHeader.sub !== subject) {
      throw new Error(
        `sealed secret is for ${String(protectedHeader.purpose)}/${String(protectedHeader.sub)}`,
      );
    }
    return new TextDecoder().decode(plaintext);
  }
}
