import * as oauth from 'oauth4webapi';
import type { OidcDefinition, ProviderCredentials, SettingsRules } from './types.js';

/** A non-empty string claim or field, else null. */
export const str = (v: unknown): string | null =>
  typeof v === 'string' && v.length > 0 ? v : null;

/** Longest picture URL kept from a provider's profile. */
const PICTURE_MAX_LENGTH = 2048;

/**
 * A provider's picture as a URL a browser may load: `https:` only, no credentials in it,
 * at most PICTURE_MAX_LENGTH characters (as given and as parsed); anything else is null.
 */
export function pictureUrl(v: unknown): string | null {
  if (typeof v !== 'string' || v.length === 0 || v.length > PICTURE_MAX_LENGTH) return null;
  const url = URL.parse(v);
  if (url?.protocol !== 'https:' || url.username || url.password) return null;
  return url.href.length <= PICTURE_MAX_LENGTH ? url.href : null;
}

/** The usual client authentication: the stored secret in the token request body. */
export async function secretPost(credentials: ProviderCredentials): Promise<oauth.ClientAuth> {
  return oauth.ClientSecretPost(credentials.secret);
}

/** Settings of a provider that needs only a client id and secret. */
export const clientSecretOnly: SettingsRules = {
  secretField: 'clientSecret',
  checkSecret: () => undefined,
  extra: {},
};

/** An OpenID provider whose issuer is one fixed URL and that admits every account. */
export const singleIssuer: Pick<OidcDefinition, 'discoveryIssuer' | 'tokenIssuer' | 'refusal'> = {
  discoveryIssuer: (configured) => configured,
  tokenIssuer: (discovered) => discovered,
  refusal: () => undefined,
};
