import type { ProviderDefinition } from './types.js';

/**
 * GitHub: plain OAuth 2 (no ID token). The profile comes from the REST API; the e-mail
 * is the primary, verified one from /user/emails (the /user e-mail may be empty or unverified).
 */
export const github: ProviderDefinition = {
  id: 'github',
  name: 'GitHub',
  kind: 'oauth2',
  scope: 'read:user user:email',
  defaults: () => ({
    issuer: 'https://github.com',
    authorizationEndpoint: 'https://github.com/login/oauth/authorize',
    tokenEndpoint: 'https://github.com/login/oauth/access_token',
    apiBase: 'https://api.github.com',
  }),
};
