import * as oauth from 'oauth4webapi';
import type { OidcDefinition, ProviderCredentials, SettingsRules } from './types.js';

/** A non-empty string claim or field, else null. */
export const str = (v: unknown): string | null =>
  typeof v === 'string' && v.length > 0 ? v : null;

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
