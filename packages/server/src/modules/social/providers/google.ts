import type { ProviderDefinition } from './types.js';

/** Google: OpenID Connect; the ID token's email_verified is a boolean we can trust. */
export const google: ProviderDefinition = {
  id: 'google',
  name: 'Google',
  kind: 'oidc',
  scope: 'openid email profile',
  defaults: () => ({ issuer: 'https://accounts.google.com' }),
};
