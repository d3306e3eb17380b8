import { importPKCS8, SignJWT } from 'jose';
import * as oauth from 'oauth4webapi';
import { socialDefaults } from '../../../config/defaults.js';
import { singleIssuer, str } from './shared.js';
import { defineProvider, type SettingRule } from './types.js';

const appleId = (field: 'teamId' | 'keyId', code: string): SettingRule => ({
  fallback: null,
  check: (value) =>
    value && /^[A-Z0-9]{10}$/.test(value)
      ? undefined
      : { path: `/${field}`, code, message: `${field} must be Apple's 10-character id` },
});

/**
 * Sign in with Apple: OpenID Connect with two quirks. The client secret is an ES256 JWT
 * we sign with the team's key; the authorization response arrives as a form POST
 * (response_mode=form_post), and carries the user's name only on the first sign-in.
 * `email_verified` is the string "true"; relay addresses (privaterelay.appleid.com) are
 * real, verified addresses.
 */
export const apple = defineProvider({
  id: 'apple',
  name: 'Apple',
  kind: 'oidc',
  scope: 'openid email name',
  defaults: () => ({ issuer: 'https://appleid.apple.com' }),
  settings: {
    // The secret is the team's .p8 key; the client secret is made from it per request.
    secretField: 'privateKeyPem',
    checkSecret: (pem) =>
      /-----BEGIN PRIVATE KEY-----/.test(pem)
        ? undefined
        : {
            path: '/privateKey',
            code: 'private_key_invalid',
            message: 'the Apple key must be a PKCS#8 PEM (.p8 file)',
          },
    extra: {
      teamId: appleId('teamId', 'team_id_invalid'),
      keyId: appleId('keyId', 'key_id_invalid'),
    },
  },
  // The client secret is an ES256 JWT signed with the team's key, valid five minutes.
  async clientAuthentication(credentials, audience) {
    const key = await importPKCS8(credentials.secret, 'ES256');
    const secret = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: credentials.keyId ?? '' })
      .setIssuer(credentials.teamId ?? '')
      .setSubject(credentials.clientId)
      .setAudience(audience)
      .setIssuedAt()
      .setExpirationTime(`${socialDefaults.appleClientSecretSeconds}s`)
      .sign(key);
    return oauth.ClientSecretPost(secret);
  },
  responseMode: 'form_post',
  authorizationParameters: {},
  ...singleIssuer,
  profile(claims, answer) {
    // The name arrives only with the first answer, as JSON in the form's `user` field.
    let name: string | null = null;
    try {
      const raw = answer.get('user');
      const user = raw
        ? (JSON.parse(raw) as { name?: { firstName?: string; lastName?: string } })
        : undefined;
      name = [user?.name?.firstName, user?.name?.lastName].filter(Boolean).join(' ') || null;
    } catch {}
    return {
      issuer: claims.iss,
      subject: claims.sub,
      email: str(claims.email),
      // email_verified arrives as the string "true".
      emailVerified: claims.email_verified === true || claims.email_verified === 'true',
      name,
      // Apple shares no picture.
      picture: null,
    };
  },
});
