/**
 * What a refused key's problem says to do (docs/design.md §4.2): what a key looks like and
 * where to get one, and for a secret key that reached a browser, that it must be revoked.
 * Never the presented value itself (docs/design.md §6.1).
 */
import type { KeyContext } from './keys.service.js';

const KEY_SHAPE = /^(sk_test_|sk_prod_|pk_test_|pk_live_)[0-9A-Za-z]{43}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const SECRET_KEY_FORM =
  'A secret key is sk_test_ (development tenants) or sk_prod_ (production) followed by 43 letters and digits';
const PUBLISHABLE_KEY_FORM =
  'A publishable key is pk_test_ (development tenants) or pk_live_ (production) followed by 43 letters and digits';
const CREATE_SECRET =
  'create one with `latchkey keys create --tenant TENANT_ID`, or in the admin area under API Keys';
const FIND_PUBLISHABLE =
  "see the tenant's with `latchkey keys list --tenant TENANT_ID` or in the admin area under API Keys (a new one: `latchkey keys create --tenant TENANT_ID --kind publishable`)";

/** What was presented, told apart without echoing it. */
function kindOf(presented: string): string {
  if (UUID.test(presented)) return 'This is a tenant id, not a key';
  if (/^(sk|pk)_(test|prod|live)_/.test(presented) && !KEY_SHAPE.test(presented))
    return /\.\.\.|[^\x21-\x7e]|xxx|<|your/i.test(presented.slice(8))
      ? 'This is a placeholder from an example, not a key'
      : 'This is not a whole key (wrong length or characters)';
  if (!KEY_SHAPE.test(presented)) return 'This is not a Latchkey key';
  return 'The key is not valid or has been revoked';
}

/** The detail of a 401 for a secret key that is missing, malformed or unknown. */
export function secretKeyRefused(
  presented: string | undefined,
  howToSend = 'Send a secret key as Authorization: Bearer sk_...',
): string {
  const what = presented ? kindOf(presented) : howToSend;
  return `${what}. ${SECRET_KEY_FORM}; ${CREATE_SECRET}.`;
}

/** The detail of a 401 for a publishable key that is missing, malformed or unknown. */
export function publishableKeyRefused(
  presented: string | undefined,
  unknown = 'The publishable key is not valid or has been revoked',
): string {
  const what = presented
    ? kindOf(presented).replace('The key is not valid or has been revoked', unknown)
    : 'Send the publishable key as ?pk= or X-Latchkey-Publishable-Key';
  return `${what}. ${PUBLISHABLE_KEY_FORM}; ${FIND_PUBLISHABLE}.`;
}

/**
 * A secret key where a browser sent it (a hosted link's `pk`, the publishable-key header, a
 * request with an Origin). `found`: the live key it is, so the exact command can be given.
 */
export function secretKeyExposed(found: KeyContext | undefined, where: string): string {
  const revoke = found
    ? `\`latchkey keys revoke --tenant ${found.tenant.id} ${found.key.id}\``
    : '`latchkey keys revoke --tenant TENANT_ID KEY_ID`';
  return `${where} is a secret key (sk_...), which must never reach a browser. Treat it as exposed: revoke it (${revoke}, or in the admin area under API Keys) and create a new one for your server. Here, use the tenant's publishable key (pk_test_... / pk_live_...): ${FIND_PUBLISHABLE}.`;
}
