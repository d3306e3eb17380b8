import type { OIDCConfig } from '@auth/core/providers';

// Latchkey as an Auth.js provider: the issuer URL, the client id and the client secret.
export const latchkey = {
  id: 'latchkey',
  name: 'Latchkey',
  type: 'oidc',
  issuer: process.env.LATCHKEY_ISSUER, // {auth_url}/t/{tenant_id}
  clientId: process.env.LATCHKEY_CLIENT_ID, // app_…
  clientSecret: process.env.LATCHKEY_CLIENT_SECRET,
} satisfies OIDCConfig<Record<string, unknown>>;
