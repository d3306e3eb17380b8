import type { Kysely } from 'kysely';
import { type AdapterPayload, errors } from 'oidc-provider';
import { defaults } from '../../config/defaults.js';
import { sha256Hex } from '../../crypto/hash.js';
import type { AppType, Schema } from '../../storage/index.js';
import type { Tenant } from '../tenants/index.js';
import { redirectUriProblem } from './apps.service.js';

/** What Latchkey keeps in columns; the rest of a registration is kept as it came. */
const COLUMNS = new Set([
  'client_id',
  'client_secret',
  'client_name',
  'redirect_uris',
  'post_logout_redirect_uris',
  'client_id_issued_at',
  'client_secret_expires_at',
  'registration_access_token',
  'registration_client_uri',
]);

const LOOPBACK_HTTP = /^http:\/\/(127\.0\.0\.1|\[::1\]|localhost)(:\d+)?\//;
const PRIVATE_SCHEME = /^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+:/;

/**
 * The type of a registered app: a confidential client is `web`; a public one is `native`
 * when it returns only to the user's own machine (RFC 8252: a loopback address or a
 * private-use scheme, as MCP clients and desktop tools do), else `spa`.
 */
function typeOf(metadata: AdapterPayload): AppType {
  if (metadata.token_endpoint_auth_method !== 'none') return 'web';
  const uris = (metadata.redirect_uris ?? []) as string[];
  return uris.every((uri) => LOOPBACK_HTTP.test(uri) || PRIVATE_SCHEME.test(uri))
    ? 'native'
    : 'spa';
}

/**
 * RFC 7591 dynamic registration (docs/design.md §14, on when the tenant turns it on):
 * node-oidc-provider's Client adapter `upsert`. The app is stored like an operator's, with
 * the same redirect URI rules for its type, but never first-party (its users always see
 * the consent page), never with client credentials, and its secret as a SHA-256 only.
 */
export async function registerApp(
  db: Kysely<Schema>,
  tenant: Tenant,
  id: string,
  metadata: AdapterPayload,
): Promise<void> {
  const grants = (metadata.grant_types ?? []) as string[];
  if (grants.some((grant) => grant !== 'authorization_code' && grant !== 'refresh_token'))
    throw new errors.InvalidClientMetadata(
      'registered apps may use authorization_code and refresh_token only',
    );
  const type = typeOf(metadata);
  const redirects = (metadata.redirect_uris ?? []) as string[];
  const postLogout = (metadata.post_logout_redirect_uris ?? []) as string[];
  const { maxRedirectUris, redirectUriMaxLength } = defaults.oauth;
  if (redirects.length > maxRedirectUris || postLogout.length > maxRedirectUris)
    throw new errors.InvalidClientMetadata(`at most ${maxRedirectUris} redirect URIs`);
  if ([...redirects, ...postLogout].some((uri) => uri.length > redirectUriMaxLength))
    throw new errors.InvalidClientMetadata(
      `a redirect URI has at most ${redirectUriMaxLength} characters`,
    );
  for (const uri of redirects) {
    const problem = redirectUriProblem(uri, type, tenant);
    if (problem) throw new errors.InvalidRedirectUri(`${uri} ${problem}`);
  }
  for (const uri of postLogout) {
    const problem = redirectUriProblem(uri, type, tenant);
    if (problem)
      throw new errors.InvalidClientMetadata(`post_logout_redirect_uris: ${uri} ${problem}`);
  }
  const registered = await db
    .selectFrom('apps')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('tenant_id', '=', tenant.id)
    .where('first_party', '=', 0)
    .executeTakeFirstOrThrow();
  if (Number(registered.n) >= defaults.oauth.maxRegisteredApps)
    throw new errors.InvalidClientMetadata('this tenant has as many registered apps as it takes');
  const rest = Object.fromEntries(Object.entries(metadata).filter(([key]) => !COLUMNS.has(key)));
  const name = String(metadata.client_name ?? '')
    .trim()
    .slice(0, defaults.oauth.appNameMaxLength);
  const now = Date.now();
  await db
    .insertInto('apps')
    .values({
      id,
      tenant_id: tenant.id,
      name: name || 'Unnamed app',
      type,
      redirect_uris: JSON.stringify(redirects),
      post_logout_redirect_uris: JSON.stringify(postLogout),
      secret_hash:
        typeof metadata.client_secret === 'string' ? sha256Hex(metadata.client_secret) : null,
      previous_secret_hash: null,
      previous_secret_expires_at: null,
      pkce_optional: 0,
      first_party: 0,
      metadata: JSON.stringify(rest),
      created_at: now,
      updated_at: now,
    })
    .execute();
}
