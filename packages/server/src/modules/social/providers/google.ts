import { clientSecretOnly, pictureUrl, secretPost, singleIssuer, str } from './shared.js';
import { defineProvider } from './types.js';

/** Google: OpenID Connect; the ID token's email_verified is a boolean we can trust. */
export const google = defineProvider({
  id: 'google',
  name: 'Google',
  kind: 'oidc',
  scope: 'openid email profile',
  defaults: () => ({ issuer: 'https://accounts.google.com' }),
  settings: clientSecretOnly,
  clientAuthentication: secretPost,
  responseMode: 'query',
  authorizationParameters: {},
  ...singleIssuer,
  profile: (claims) => ({
    issuer: claims.iss,
    subject: claims.sub,
    email: str(claims.email),
    emailVerified: claims.email_verified === true,
    name: str(claims.name),
    // The `profile` scope puts the picture in the ID token (as in the userinfo answer).
    picture: pictureUrl(claims.picture),
  }),
});
