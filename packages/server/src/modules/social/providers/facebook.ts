import { clientSecretOnly, pictureUrl, secretPost, str } from './shared.js';
import { defineProvider } from './types.js';

/**
 * Facebook Login: plain OAuth 2; the profile comes from the Graph API's /me. Facebook
 * returns only confirmed e-mail addresses, and may return none at all. The picture field
 * answers `{ data: { url, width, height, is_silhouette } }`.
 */
export const facebook = defineProvider({
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
  settings: clientSecretOnly,
  clientAuthentication: secretPost,
  responseMode: 'query',
  authorizationParameters: {},
  async profile(issuer, get) {
    const me = (await get('/me?fields=id,name,email,picture')) as {
      id?: unknown;
      name?: unknown;
      email?: unknown;
      picture?: { data?: { url?: unknown } } | null;
    };
    if (typeof me.id !== 'string') throw new Error('Facebook /me has no id');
    const email = str(me.email);
    return {
      issuer,
      subject: me.id,
      email,
      emailVerified: email !== null,
      name: str(me.name),
      picture: pictureUrl(me.picture?.data?.url),
    };
  },
});
