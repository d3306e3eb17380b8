import type { ProviderDefinition } from './types.js';

/**
 * Sign in with Apple: OpenID Connect with two quirks. The client secret is an ES256 JWT
 * we sign with the team's key; the authorization response arrives as a form POST
 * (response_mode=form_post), and carries the user's name only on the first sign-in.
 * `email_verified` is the string "true"; relay addresses (privaterelay.appleid.com) are
 * real, verified addresses.
 */
export const apple: ProviderDefinition = {
  id: 'apple',
  name: 'Apple',
  kind: 'oidc',
  scope: 'openid email name',
  defaults: () => ({ issuer: 'https://appleid.apple.com' }),
};
