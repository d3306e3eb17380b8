export const PROVIDER_IDS = ['google', 'facebook', 'github', 'apple', 'microsoft'] as const;
export type ProviderId = (typeof PROVIDER_IDS)[number];

/** Endpoints of a provider; the server configuration may replace them (never a tenant). */
export interface Endpoints {
  issuer?: string;
  authorizationEndpoint?: string;
  tokenEndpoint?: string;
  userinfoEndpoint?: string;
  jwksUri?: string;
  apiBase?: string;
}

/** What a provider tells us about the person, normalised. */
export interface Profile {
  /** Who asserts the identity (Microsoft: the user's own directory). */
  issuer: string;
  subject: string;
  email: string | null;
  /** True only when the provider vouches that the person controls the address. */
  emailVerified: boolean;
  name: string | null;
}

export interface ProviderDefinition {
  id: ProviderId;
  name: string;
  kind: 'oidc' | 'oauth2';
  scope: string;
  /** The real endpoints (Microsoft's depend on the tenant's audience). */
  defaults(settings: { audience: string | null }): Endpoints;
}
