import type { Readable } from 'node:stream';
import type { HashAlgorithm } from '../../crypto/imported-hashes/index.js';

/**
 * One user read from an export, whatever its source (docs/design.md §16). A parser fills
 * it from its vendor's fields; the engine (importUsers) checks and writes it.
 */
export interface ImportedUser {
  /** The line (or record number) of the input the user came from, for reports. */
  line: number;
  email: string;
  emailVerified: boolean;
  name?: string | null;
  metadata?: Record<string, unknown>;
  /** Roles, as Latchkey's own export carries them; vendors may leave them out. */
  roles?: string[];
  /** Disabled at the source (Latchkey's own export; a vendor's "blocked"). */
  disabled?: boolean;
  /**
   * The password hash as the source kept it. `encoded` is the self-describing form of
   * each algorithm (crypto/imported-hashes/index.ts, HASH_FORMATS). Absent: no password.
   * An unknown algorithm or a malformed `encoded` imports the user without a password
   * (reported as `passwordless`).
   */
  password?: { algorithm: HashAlgorithm | (string & {}); encoded: string };
  /**
   * Social identities: `provider` is one of Latchkey's provider ids (google, github,
   * apple, microsoft, facebook); `issuer` defaults to the provider's fixed issuer.
   */
  identities: { provider: string; subject: string; issuer?: string; email?: string | null }[];
  /** When the user was created at the source; default: now. */
  createdAt?: Date;
  /**
   * What the parser read but could not carry (an identity of a provider Latchkey lacks,
   * an authenticator app's secret…): reported with the row's line, the user imported.
   */
  notes?: string[];
}

/** A row that could not be read into a user: it is reported, never imported. */
export interface RowRefusal {
  line: number;
  reason: string;
}

export type ImportRow = ImportedUser | RowRefusal;

export const isRefusal = (row: ImportRow): row is RowRefusal => 'reason' in row;

/** Firebase's password hash parameters (its console, "Password hash parameters"). */
export interface FirebaseHashParameters {
  /** base64_signer_key */
  hashKey: string;
  /** base64_salt_separator */
  saltSeparator: string;
  rounds: number;
  memCost: number;
}

export interface ParserOptions {
  /** `--hash-key --salt-separator --rounds --mem-cost`, for `--from firebase`. */
  firebase?: FirebaseHashParameters;
  /**
   * Further input files named after the first on the command line (Auth0's password-hash
   * export beside its user export).
   */
  companions?: string[];
}

/** One file per source format (modules/migration/parsers/), rows in, users out. */
export type Parser = (input: Readable, options: ParserOptions) => AsyncIterable<ImportRow>;
