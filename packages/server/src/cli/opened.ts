import type { SecretBox } from '../crypto/secret-box.js';
import type { Database } from '../storage/index.js';

/** A command's database, with the master secret's box once the database agreed to it. */
export type OpenedDatabase = Database & { box: SecretBox };
