import { clientSecretOnly, secretPost, str } from './shared.js';
import { defineProvider } from './types.js';

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const MULTI = /\/(common|organizations|consumers)\/v2\.0\/?$/;
/** Microsoft's directory of personal accounts. */
const CONSUMERS = '9188040d-6c67-4c5b-b112-36a304b66dad';

/** The token's directory must be one the tenant's audience admits, whatever the endpoints. */
function admitsDirectory(audience: string | null, tid: unknown): boolean {
  if (typeof tid !== 'string' || !GUID.test(tid)) return false;
  if (!audience || audience === 'common') return true;
  if (audience === 'consumers') return tid === CONSUMERS;
  if (audience === 'organizations') return tid !== CONSUMERS;
  return tid === audience;
}

/**
 * Microsoft identity platform: OpenID Connect. The issuer depends on the user's directory
 * (`https://login.microsoftonline.com/{tid}/v2.0`), so the `iss` of each ID token must
 * match its own `tid` claim; with the `common`/`organizations`/`consumers` audiences the
 * discovery document only holds a `{tenantid}` template. Its `email` claim is never
 * verified by Microsoft: it is not used to link accounts. The identity is the directory
 * and object id (`tid`, `oid`).
 */
export const microsoft = defineProvider({
  id: 'microsoft',
  name: 'Microsoft',
  kind: 'oidc',
  scope: 'openid email profile',
  defaults: ({ audience }) => ({
    issuer: `https://login.microsoftonline.com/${audience ?? 'common'}/v2.0`,
  }),
  settings: {
    ...clientSecretOnly,
    extra: {
      audience: {
        fallback: 'common',
        check: (value) =>
          value && (/^(common|organizations|consumers)$/.test(value) || GUID.test(value))
            ? undefined
            : {
                path: '/audience',
                code: 'audience_invalid',
                message: 'audience is common, organizations, consumers or a directory id',
              },
      },
    },
  },
  clientAuthentication: secretPost,
  responseMode: 'query',
  authorizationParameters: {},
  // The common, organizations and consumers documents name a `{tenantid}` template as
  // their issuer; URL encoding of the braces is the same on both sides of the check.
  discoveryIssuer: (configured) =>
    MULTI.test(configured.href)
      ? new URL(configured.href.replace(MULTI, '/{tenantid}/v2.0'))
      : configured,
  // With the template, the expected issuer is the template filled with the token's own
  // `tid`, which must be a GUID; oauth4webapi then checks `iss` against exactly that.
  tokenIssuer(discovered, unverified) {
    if (!discovered.includes('{tenantid}')) return discovered;
    const tid = unverified.tid;
    if (typeof tid !== 'string' || !GUID.test(tid))
      throw new Error('Microsoft ID token without a directory (tid)');
    return discovered.replace('{tenantid}', tid);
  },
  refusal: (claims, credentials) =>
    admitsDirectory(credentials.audience, claims.tid)
      ? undefined
      : 'This Microsoft account belongs to a directory this application does not admit.',
  profile(claims) {
    // `email` is never verified by Microsoft, so it can make a new account but never join
    // an existing one.
    return {
      issuer: claims.iss,
      subject: str(claims.oid) ?? claims.sub,
      email: str(claims.email),
      emailVerified: false,
      name: str(claims.name),
      // Microsoft gives no picture URL: the photo is binary behind Microsoft Graph
      // (/me/photo/$value, with another scope and token), which a browser cannot load.
      picture: null,
    };
  },
});
