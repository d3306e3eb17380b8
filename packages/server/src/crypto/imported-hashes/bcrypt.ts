import { verify } from '@node-rs/bcrypt';
import type { HashVerifier } from './verifier.js';

// Modular crypt format: $2a$, $2b$, $2x$ or $2y$, two-digit cost, 22 characters of salt and
// 31 of hash in bcrypt's own base64. Auth0, Supabase and Clerk keep this form. Costs up to
// 14 (about a second here): a higher one would let a hostile file make each check take
// minutes, so such a hash is refused (the user resets the password).
const BCRYPT = /^\$2[abxy]\$(0[4-9]|1[0-4])\$[./A-Za-z0-9]{53}$/;

/** bcrypt, checked by @node-rs/bcrypt (the Rust `bcrypt` crate) on libuv's thread pool. */
export const bcrypt: HashVerifier = {
  accepts: (encoded) => BCRYPT.test(encoded),
  verify: (encoded, password) => verify(password, encoded),
};
