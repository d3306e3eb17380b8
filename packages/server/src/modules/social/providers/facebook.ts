import type { ProviderDefinition } from './types.js';

/**
 * Facebook Login: plain OAuth 2; the profile comes from the Graph API's /me. Facebook
 * returns only confirmed e-mail addresses, and may return none at all.
 */
export const facebook: ProviderDefinition = {
  id: 'facebook',
  name: 'Facebook',
  kind: 'oauth2',
  scope: 'email public_profile',
  defaults: () => ({
    issuer: 'https://www.facebook.com',
    authorizationEndpoint: 'https://www.facebook.com/v19.0/dialog/oauth',
    tokenEndpoint: 'https://graph.facebook.com/v19.0/oauth/access_token',
    apiBase: 'https://graph.facebook.com/v19.0',
  }),
};
