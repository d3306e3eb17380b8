import { clientSecretOnly, pictureUrl, secretPost, str } from './shared.js';
import { defineProvider } from './types.js';

/**
 * GitHub: plain OAuth 2 (no ID token). The profile comes from the REST API; the e-mail
 * is the primary, verified one from /user/emails (the /user e-mail may be empty or unverified).
 */
export const github = defineProvider({
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
  settings: clientSecretOnly,
  clientAuthentication: secretPost,
  responseMode: 'query',
  authorizationParameters: {},
  async profile(issuer, get) {
    const user = (await get('/user')) as {
      id?: unknown;
      name?: unknown;
      login?: unknown;
      avatar_url?: unknown;
    };
    if (typeof user.id !== 'number' && typeof user.id !== 'string')
      throw new Error('GitHub /user has no id');
    const emails = (await get('/user/emails')) as {
      email?: unknown;
      primary?: unknown;
      verified?: unknown;
    }[];
    if (!Array.isArray(emails)) throw new Error('GitHub /user/emails is not a list');
    // The primary address, verified or not: we say which.
    const primary = emails.find((e) => e.primary === true && typeof e.email === 'string');
    return {
      issuer,
      subject: String(user.id),
      email: (primary?.email as string | undefined) ?? null,
      emailVerified: primary?.verified === true,
      name: str(user.name) ?? str(user.login),
      picture: pictureUrl(user.avatar_url),
    };
  },
});
