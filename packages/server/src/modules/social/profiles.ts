import type { IDToken } from 'oauth4webapi';
import type { Profile, ProviderId } from './providers/index.js';

const str = (v: unknown) => (typeof v === 'string' && v.length > 0 ? v : null);

/** Profiles from an ID token (Google, Microsoft, Apple), each provider's quirks where they bite. */
export function profileFromIdToken(
  provider: ProviderId,
  claims: IDToken,
  extra: { appleUser?: string },
): Profile {
  switch (provider) {
    case 'microsoft': {
      // The identity is the directory (tid, part of iss) and the object id; `email` is never
      // verified by Microsoft, so it can make a new account but never join an existing one.
      const oid = str(claims.oid) ?? claims.sub;
      return {
        issuer: claims.iss,
        subject: oid,
        email: str(claims.email),
        emailVerified: false,
        name: str(claims.name),
      };
    }
    case 'apple': {
      // email_verified arrives as the string "true"; the name only in the first response.
      let name: string | null = null;
      try {
        const user = extra.appleUser
          ? (JSON.parse(extra.appleUser) as { name?: { firstName?: string; lastName?: string } })
          : undefined;
        name = [user?.name?.firstName, user?.name?.lastName].filter(Boolean).join(' ') || null;
      } catch {}
      return {
        issuer: claims.iss,
        subject: claims.sub,
        email: str(claims.email),
        emailVerified: claims.email_verified === true || claims.email_verified === 'true',
        name,
      };
    }
    default:
      return {
        issuer: claims.iss,
        subject: claims.sub,
        email: str(claims.email),
        emailVerified: claims.email_verified === true,
        name: str(claims.name),
      };
  }
}

type Get = (path: string) => Promise<unknown>;

/** GitHub: the primary address from /user/emails, verified or not (we say which). */
export async function githubProfile(issuer: string, get: Get): Promise<Profile> {
  const user = (await get('/user')) as { id?: unknown; name?: unknown; login?: unknown };
  if (typeof user.id !== 'number' && typeof user.id !== 'string')
    throw new Error('GitHub /user has no id');
  const emails = (await get('/user/emails')) as {
    email?: unknown;
    primary?: unknown;
    verified?: unknown;
  }[];
  if (!Array.isArray(emails)) throw new Error('GitHub /user/emails is not a list');
  const primary = emails.find((e) => e.primary === true && typeof e.email === 'string');
  return {
    issuer,
    subject: String(user.id),
    email: (primary?.email as string | undefined) ?? null,
    emailVerified: primary?.verified === true,
    name: str(user.name) ?? str(user.login),
  };
}

/** Facebook: /me; the Graph API returns only confirmed addresses, or none. */
export async function facebookProfile(issuer: string, get: Get): Promise<Profile> {
  const me = (await get('/me?fields=id,name,email')) as {
    id?: unknown;
    name?: unknown;
    email?: unknown;
  };
  if (typeof me.id !== 'string') throw new Error('Facebook /me has no id');
  const email = str(me.email);
  return { issuer, subject: me.id, email, emailVerified: email !== null, name: str(me.name) };
}
