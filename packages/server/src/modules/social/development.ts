import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { FieldError } from '../../errors/index.js';
import type { Schema } from '../../storage/index.js';
import { checkName, emailKey, isValidEmail } from '../users/index.js';
import { SocialRefusal } from './link.service.js';
import { PROVIDERS, type Profile, type ProviderId } from './providers/index.js';

/**
 * Development mode (docs/design.md §20): on a development tenant, a provider may be enabled
 * without credentials. Its button leads to Latchkey's own page, where the person types what
 * the provider would return; the answer then takes the real callback's path (linking
 * policy, identities, session, redirect). No request ever goes to the provider.
 */

/**
 * The issuer of every development identity: never a real provider's, so a typed profile
 * can never be taken for (or join) a real provider account's identity.
 */
export const DEVELOPMENT_ISSUER = 'urn:latchkey:development';

/** What the development page's form carries. */
export interface DevelopmentAnswer {
  email: string;
  name: string;
  emailVerified: boolean;
}

/**
 * The subject a development profile gets: derived from the address (by its matching key),
 * so that signing in again with the same address finds the same identity.
 */
export function developmentSubject(provider: ProviderId, email: string): string {
  const digest = createHash('sha256')
    .update(`${provider}\n${emailKey(email)}`)
    .digest('hex');
  return `dev-${digest.slice(0, 32)}`;
}

/** The typed answer as a provider profile, or the field errors that keep the form open. */
export function developmentProfile(
  provider: ProviderId,
  answer: DevelopmentAnswer,
): { profile: Profile } | { errors: FieldError[] } {
  const email = answer.email.trim();
  const name = answer.name.trim();
  const errors: FieldError[] = [];
  if (!isValidEmail(email))
    errors.push({
      path: '/email',
      code: 'email_invalid',
      message: `Type the e-mail address ${PROVIDERS[provider].name} would return, like ada@example.com.`,
    });
  const nameError = name === '' ? undefined : checkName(name);
  if (nameError) errors.push({ ...nameError, message: `The name ${nameError.message.slice(5)}.` });
  if (errors.length) return { errors };
  return {
    profile: {
      issuer: DEVELOPMENT_ISSUER,
      subject: developmentSubject(provider, email),
      email,
      emailVerified: answer.emailVerified,
      name: name || null,
      // The page asks for no picture.
      picture: null,
    },
  };
}

/**
 * A started development flow the page may show: unknown, used or expired ones are
 * refused (the form's answer claims it through `claimFlow`, like a provider's answer).
 */
export async function pendingDevelopmentFlow(
  db: Kysely<Schema>,
  provider: ProviderId,
  state: string,
): Promise<{ tenant_id: string; hosted_query: string; admin_id: string | null }> {
  const flow = await db
    .selectFrom('oauth_flows')
    .select(['tenant_id', 'provider', 'hosted_query', 'admin_id', 'used_at', 'expires_at'])
    .where('state', '=', state)
    .executeTakeFirst();
  if (!flow || flow.provider !== provider)
    throw new SocialRefusal('This sign-in attempt is unknown. Start again.');
  if (flow.used_at !== null)
    throw new SocialRefusal(
      'This sign-in attempt was used already. Start again.',
      flow.hosted_query,
    );
  if (flow.expires_at <= Date.now())
    throw new SocialRefusal('This sign-in attempt took too long. Start again.', flow.hosted_query);
  return flow;
}
