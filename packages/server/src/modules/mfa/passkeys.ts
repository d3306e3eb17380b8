import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server';
import Bowser from 'bowser';
import type { Kysely } from 'kysely';
import { defaults } from '../../config/defaults.js';
import { LatchkeyError } from '../../errors/index.js';
import type { PasskeyRow, Schema } from '../../storage/index.js';
import { recordAudit } from '../audit/index.js';
import type { AuthMethod } from '../sessions/index.js';
import type { Tenant } from '../tenants/index.js';
import { getUser, type User } from '../users/index.js';
import { emitEvent } from '../webhooks/index.js';
import { challengeCheck, claimChallenge, newChallenge, refused } from './passkey-challenges.js';

/**
 * Passkeys (docs/design.md §13): WebAuthn Level 3 discoverable credentials with user
 * verification, checked by SimpleWebAuthn. Ours are the tenant scoping, the single-use
 * challenges, the user handle and the counter kept in storage.
 */

/** The WebAuthn relying party: `{auth_url}`'s host is the RP id, its origin the one origin. */
export interface RelyingParty {
  id: string;
  origin: string;
}

/**
 * The relying party of `{auth_url}` for a tenant's passkeys, or undefined where there are
 * none: the tenant turned them off (`--passkeys off`), or they cannot work, as an RP id is
 * a domain (WebAuthn Level 3 section 5.1.4.1) and browsers refuse an IP address (serve on
 * `localhost` in development).
 */
export function relyingPartyOf(authUrl: string, tenant: Tenant): RelyingParty | undefined {
  if (!tenant.passkeysEnabled) return undefined;
  const url = new URL(authUrl);
  if (isIP(url.hostname.replace(/^\[|\]$/g, '')) !== 0) return undefined;
  return { id: url.hostname, origin: url.origin };
}

const ceremonyTimeout = defaults.passkeys.challengeLifetimeMs;

/**
 * The signature algorithms a new passkey may use, most preferred first: EdDSA, ES256 and
 * RS256 (COSE, RFC 9053), which every authenticator offers one of. SimpleWebAuthn would add
 * ML-DSA-44 where the runtime has it, which Node.js still marks experimental.
 */
async function algorithms(): Promise<number[]> {
  const { COSEALG } = await import('@simplewebauthn/server/helpers');
  return [COSEALG.EdDSA, COSEALG.ES256, COSEALG.RS256];
}

/**
 * SimpleWebAuthn, loaded at the first ceremony: its certificate parsers (@peculiar/x509 and
 * the ASN.1 schemas) took 40 ms of every CLI command's start and their memory in every
 * process, passkeys or not.
 */
const webauthn = () => import('@simplewebauthn/server');

/** The options of `navigator.credentials.create()` for a new passkey of `user`. */
export async function passkeyRegistrationOptions(
  db: Kysely<Schema>,
  rp: RelyingParty,
  tenant: Tenant,
  user: User,
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const own = await db
    .selectFrom('passkeys')
    .select(['credential_id', 'transports'])
    .where('tenant_id', '=', tenant.id)
    .where('user_id', '=', user.id)
    .execute();
  const { generateRegistrationOptions } = await webauthn();
  return generateRegistrationOptions({
    rpName: tenant.name,
    rpID: rp.id,
    userName: user.email,
    userDisplayName: user.name ?? user.email,
    // The user handle: our user id, never the address (section 14.6.1 of WebAuthn Level 3).
    userID: new TextEncoder().encode(user.id),
    challenge: await newChallenge(db, tenant.id, user.id, 'register'),
    timeout: ceremonyTimeout,
    supportedAlgorithmIDs: await algorithms(),
    attestationType: 'none',
    // The same authenticator is not registered twice.
    excludeCredentials: own.map((c) => ({
      id: c.credential_id,
      transports: JSON.parse(c.transports) as string[],
    })),
    authenticatorSelection: {
      residentKey: 'required',
      requireResidentKey: true,
      userVerification: 'required',
    },
  });
}

/** A passkey as its owner sees it. */
export interface Passkey {
  id: string;
  name: string;
  /** Synced between devices (a multi-device credential). */
  synced: boolean;
  createdAt: number;
  lastUsedAt: number | null;
}

const toPasskey = (row: PasskeyRow): Passkey => ({
  id: row.id,
  name: row.name,
  synced: row.device_type === 'multiDevice' || row.backed_up === 1,
  createdAt: Number(row.created_at),
  lastUsedAt: row.last_used_at === null ? null : Number(row.last_used_at),
});

/**
 * A passkey's first name, from the browser that made it ("Chrome on Linux"; parsed by
 * bowser, as the admin area's session labels): its owner can tell them apart and rename them.
 */
function passkeyLabel(userAgent: string | undefined): string {
  const { browser, os } = userAgent ? Bowser.parse(userAgent) : { browser: {}, os: {} };
  if (!browser.name) return 'Passkey';
  return (os.name ? `${browser.name} on ${os.name}` : browser.name).slice(
    0,
    defaults.passkeys.nameMaxLength,
  );
}

/** Checks and stores the credential `response` made with `passkeyRegistrationOptions`. */
export async function registerPasskey(
  db: Kysely<Schema>,
  rp: RelyingParty,
  tenant: Tenant,
  user: User,
  response: unknown,
  userAgent: string | undefined,
): Promise<Passkey> {
  if (!isCredential(response, 'attestationObject'))
    throw new LatchkeyError('invalid_request', 'The browser sent no passkey.');
  const check = challengeCheck(db, tenant.id, user.id, 'register');
  const { verifyRegistrationResponse: verify } = await webauthn();
  let verified: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
  try {
    verified = await verify({
      response: response as RegistrationResponseJSON,
      expectedChallenge: check.expectedChallenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      requireUserVerification: true,
      supportedAlgorithmIDs: await algorithms(),
    });
  } catch (error) {
    throw refused('This passkey could not be checked. Try again.', error);
  }
  if (!verified.verified) throw refused('This passkey could not be checked. Try again.');
  await claimChallenge(db, check.signed.challenge);
  const info = verified.registrationInfo;
  const row: PasskeyRow = {
    id: randomUUID(),
    tenant_id: tenant.id,
    user_id: user.id,
    credential_id: info.credential.id,
    public_key: Buffer.from(info.credential.publicKey).toString('base64url'),
    counter: info.credential.counter,
    transports: JSON.stringify(info.credential.transports ?? []),
    device_type: info.credentialDeviceType,
    backed_up: info.credentialBackedUp ? 1 : 0,
    name: passkeyLabel(userAgent),
    created_at: Date.now(),
    last_used_at: null,
  };
  try {
    await db.transaction().execute(async (trx) => {
      await trx.insertInto('passkeys').values(row).execute();
      await recordAudit(trx, {
        tenantId: tenant.id,
        userId: user.id,
        kind: 'factor_added',
        detail: { type: 'passkey', factorId: row.id, at: 'account' },
      });
      await emitEvent(trx, tenant.id, 'user.factor_added', {
        userId: user.id,
        factor: {
          id: row.id,
          type: 'passkey',
          name: row.name,
          confirmed: true,
          createdAt: new Date(row.created_at).toISOString(),
          lastUsedAt: null,
        },
      });
    });
  } catch (error) {
    const taken = await db
      .selectFrom('passkeys')
      .select('id')
      .where('tenant_id', '=', tenant.id)
      .where('credential_id', '=', row.credential_id)
      .executeTakeFirst();
    if (taken) throw new LatchkeyError('conflict', 'This passkey is registered already.');
    throw error;
  }
  return toPasskey(row);
}

/** The options of `navigator.credentials.get()` for a sign-in: any passkey of the tenant. */
export async function passkeySignInOptions(
  db: Kysely<Schema>,
  rp: RelyingParty,
  tenant: Tenant,
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const { generateAuthenticationOptions } = await webauthn();
  return generateAuthenticationOptions({
    rpID: rp.id,
    challenge: await newChallenge(db, tenant.id, null, 'authenticate'),
    timeout: ceremonyTimeout,
    userVerification: 'required',
    // Discoverable credentials: the authenticator offers the user's own.
    allowCredentials: [],
  });
}

/** Who signed in with a passkey, and how (RFC 8176). */
export interface PasskeySignIn {
  user: User;
  amr: AuthMethod[];
}

/**
 * Checks a sign-in assertion (WebAuthn Level 3 section 7.2): the credential is one of this
 * tenant's, the user handle is its user's, and SimpleWebAuthn checks the challenge (used
 * up here), the origin, the RP id hash, user presence and verification, the signature and
 * the counter. A disabled user is refused after the proof, so that only the passkey's
 * holder learns it.
 */
export async function verifyPasskeySignIn(
  db: Kysely<Schema>,
  rp: RelyingParty,
  tenant: Tenant,
  response: unknown,
): Promise<PasskeySignIn> {
  if (!isCredential(response, 'authenticatorData'))
    throw new LatchkeyError('invalid_request', 'The browser sent no passkey.');
  const assertion = response as AuthenticationResponseJSON;
  const row = await db
    .selectFrom('passkeys')
    .selectAll()
    .where('tenant_id', '=', tenant.id)
    .where('credential_id', '=', assertion.id)
    .executeTakeFirst();
  if (!row)
    throw refused(
      'This passkey is not registered for this application (it may have been removed). Sign in another way.',
    );
  const handle = assertion.response.userHandle;
  if (!handle || Buffer.from(handle, 'base64url').toString('utf8') !== row.user_id)
    throw refused('This passkey does not belong to its account.');
  const check = challengeCheck(db, tenant.id, null, 'authenticate');
  const { verifyAuthenticationResponse: verify } = await webauthn();
  let verified: Awaited<ReturnType<typeof verifyAuthenticationResponse>>;
  try {
    verified = await verify({
      response: assertion,
      expectedChallenge: check.expectedChallenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      credential: {
        id: row.credential_id,
        publicKey: new Uint8Array(Buffer.from(row.public_key, 'base64url')),
        counter: Number(row.counter),
      },
      requireUserVerification: true,
    });
  } catch (error) {
    throw refused('This passkey sign-in could not be checked. Try again.', error);
  }
  const info = verified.authenticationInfo;
  if (!verified.verified || !info.userVerified)
    throw refused('This passkey sign-in could not be checked. Try again.');
  await claimChallenge(db, check.signed.challenge);
  const user = await getUser(db, tenant.id, row.user_id);
  if (user.disabled) throw new LatchkeyError('forbidden', 'This account is disabled.');
  // Compared and set together: of two assertions that raced with one counter, one counts.
  const updated = await db
    .updateTable('passkeys')
    .set({
      counter: info.newCounter,
      last_used_at: Date.now(),
      device_type: info.credentialDeviceType,
      backed_up: info.credentialBackedUp ? 1 : 0,
    })
    .where('id', '=', row.id)
    .where('counter', '=', row.counter)
    .executeTakeFirst();
  if (Number(updated.numUpdatedRows) !== 1)
    throw refused('This passkey sign-in could not be checked. Try again.');
  const synced = info.credentialDeviceType === 'multiDevice' || info.credentialBackedUp;
  // RFC 8176 section 2: a key held in hardware (`hwk`) or a synced one (`swk`), unlocked by
  // the user (`user`): two factors in one gesture (`mfa`).
  return { user, amr: [synced ? 'swk' : 'hwk', 'user', 'mfa'] };
}

/** The shape of a PublicKeyCredential's JSON, enough to hand it to SimpleWebAuthn. */
function isCredential(value: unknown, field: 'attestationObject' | 'authenticatorData'): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as { id?: unknown; type?: unknown; response?: Record<string, unknown> };
  return (
    typeof v.id === 'string' &&
    v.id.length > 0 &&
    v.id.length <= 1024 &&
    v.type === 'public-key' &&
    typeof v.response === 'object' &&
    v.response !== null &&
    typeof v.response[field] === 'string' &&
    typeof v.response.clientDataJSON === 'string'
  );
}

/** A user's passkeys, newest first. */
export async function listPasskeys(
  db: Kysely<Schema>,
  tenantId: string,
  userId: string,
): Promise<Passkey[]> {
  const rows = await db
    .selectFrom('passkeys')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .orderBy('created_at', 'desc')
    .execute();
  return rows.map(toPasskey);
}

/** Renames one of a user's passkeys; false when it is not theirs (or gone). */
export async function renamePasskey(
  db: Kysely<Schema>,
  tenantId: string,
  userId: string,
  id: string,
  name: string,
): Promise<boolean> {
  const trimmed = name.trim();
  const max = defaults.passkeys.nameMaxLength;
  if (trimmed.length === 0 || [...trimmed].length > max)
    throw new LatchkeyError('validation_failed', `A name has 1 to ${max} characters.`);
  const result = await db
    .updateTable('passkeys')
    .set({ name: trimmed })
    .where('id', '=', id)
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
