import type { ProviderDefinition } from './types.js';

/**
 * Microsoft identity platform: OpenID Connect. The issuer depends on the user's directory
 * (`https://login.microsoftonline.com/{tid}/v2.0`), so the `iss` of each ID token must
 * match its own `tid` claim; with the `common`/`organizations`/`consumers` audiences the
 * discovery document only holds a `{tenantid}` template. Its `email` claim is never
 * verified by Microsoft: it is not used to link accounts. The identity is the directory
 * and object id (`tid`, `oid`).
 */
export const microsoft: ProviderDefinition = {
  id: 'microsoft',
  name: 'Microsoft',
  kind: 'oidc',
  scope: 'openid email profile',
  defaults: ({ audience }) => ({
    issuer: `https://login.microsoftonline.com/${audience ?? 'common'}/v2.0`,
  }),
};
