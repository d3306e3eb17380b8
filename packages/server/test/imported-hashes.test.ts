/**
 * docs/design.md §16: which imported hashes are taken (and how they are stored), and the cost
 * limits that keep a hostile file from making one sign-in check take minutes.
 */
import bcryptjs from 'bcryptjs';
import { describe, expect, it } from 'vitest';
import {
  isImportedHash,
  storedImportedHash,
  verifyImportedHash,
} from '../src/crypto/imported-hashes/index.js';

const B64 = 'c2FsdHNhbHRzYWx0c2FsdA';
const KEY = 'a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2U';

describe('imported password hashes', () => {
  it('stores a known, well-formed hash as algorithm:encoded, apart from the tenant’s own', () => {
    const hash = bcryptjs.hashSync('pw', 4);
    const stored = storedImportedHash('bcrypt', hash);
    expect(stored).toBe(`bcrypt:${hash}`);
    expect(isImportedHash(stored as string)).toBe(true);
    expect(isImportedHash('$argon2id$v=19$m=19456,t=2,p=1$abc$def')).toBe(false);
  });

  it.each([
    ['md5', '5f4dcc3b5aa765d61d8327deb882cf99'],
    ['bcrypt', '$2b$10$tooshort'],
    ['bcrypt', `$2b$15$${'a'.repeat(53)}`],
    ['scrypt', `$scrypt$ln=20,r=8,p=1$${B64}$${KEY}`],
    ['scrypt', `$scrypt$ln=14,r=8$${B64}$${KEY}`],
    ['argon2id', `$argon2id$v=19$m=1048576,t=2,p=1$${B64}$${KEY}`],
    ['argon2i', `$argon2id$v=19$m=4096,t=2,p=1$${B64}$${KEY}`],
    ['pbkdf2-sha256', `pbkdf2_sha256$50000000$salt$${KEY}`],
    ['pbkdf2-sha256', 'pbkdf2_sha256$1000$salt$!!!'],
    ['firebase-scrypt', `$firebase-scrypt$rounds=8,mem=14$Bw==$${KEY}$${B64}`],
    ['toString', 'x'],
  ])('refuses %s %s (the user comes in without a password)', (algorithm, encoded) => {
    expect(storedImportedHash(algorithm, encoded)).toBeUndefined();
  });

  it('checks a bcrypt hash, and the NFKC form of a password typed the other way', async () => {
    const stored = `bcrypt:${bcryptjs.hashSync('ﬁle password', 4)}`;
    expect(await verifyImportedHash(stored, 'ﬁle password')).toBe(true);
    expect(await verifyImportedHash(stored, 'file password')).toBe(false);
    expect(await verifyImportedHash(stored, 'wrong')).toBe(false);
    expect(await verifyImportedHash('bcrypt:garbage', 'wrong')).toBe(false);
  });
});
