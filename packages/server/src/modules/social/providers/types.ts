import type { ClientAuth, IDToken } from 'oauth4webapi';
import type { FieldError } from '../../../errors/index.js';

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
  /**
   * The person's picture: an `https:` URL of at most 2048 characters (`pictureUrl`), or
   * null when the provider gives none, or none we can show.
   */
  picture: string | null;
}

/** A tenant's stored settings for one provider, with the secret opened. */
export interface ProviderCredentials {
  clientId: string;
  /** The client secret, or Apple's PKCS#8 key. */
  secret: string;
  teamId: string | null;
  keyId: string | null;
  audience: string | null;
}

/** The settings a provider keeps besides the client id and secret (one column each). */
export type ExtraSetting = 'teamId' | 'keyId' | 'audience';

export interface SettingRule {
  /** Stored when neither the input nor the stored settings give a value. */
  fallback: string | null;
  /** The value that would be stored (input, else stored, else fallback) is checked. */
  check(value: string | null): FieldError | undefined;
}

export interface SettingsRules {
  /** The input field that carries the secret: a client secret, or Apple's .p8 key. */
  secretField: 'clientSecret' | 'privateKeyPem';
  /** Checks a secret when one is given. */
  checkSecret(secret: string): FieldError | undefined;
  /** The extra settings this provider keeps; the others are stored as null. */
  extra: Readonly<Partial<Record<ExtraSetting, SettingRule>>>;
}

/** An authenticated GET on the provider's API (plain OAuth 2 providers). */
export type ApiGet = (path: string) => Promise<unknown>;

interface CommonDefinition<Id extends string> {
  id: Id;
  /** Shown on buttons and pages: "Continue with {name}". */
  name: string;
  scope: string;
  /** The real endpoints (Microsoft's depend on the tenant's audience). */
  defaults(settings: { audience: string | null }): Endpoints;
  settings: SettingsRules;
  /** How we authenticate at the token endpoint; `audience` is the provider's issuer. */
  clientAuthentication(credentials: ProviderCredentials, audience: string): Promise<ClientAuth>;
  /**
   * How the answer comes back. `form_post` is a cross-site POST, which carries only a
   * SameSite=None cookie (OAuth 2.0 Form Post Response Mode).
   */
  responseMode: 'query' | 'form_post';
  /** Sent with every authorization request besides the standard ones. */
  authorizationParameters: Readonly<Record<string, string>>;
}

/** OpenID Connect: the profile comes from the ID token. */
export interface OidcDefinition<Id extends string = string> extends CommonDefinition<Id> {
  kind: 'oidc';
  /** The issuer the discovery document at `configured` names. */
  discoveryIssuer(configured: URL): URL;
  /**
   * The issuer an ID token must name, given the discovered one and the token's claims
   * (read before validation, only to choose the issuer; the validation follows).
   */
  tokenIssuer(discovered: string, unverified: Readonly<Record<string, unknown>>): string;
  /** Why a validated ID token is refused here, if it is (shown to the user). */
  refusal(claims: IDToken, credentials: ProviderCredentials): string | undefined;
  /** `answer` is the authorization response (Apple sends the name there). */
  profile(claims: IDToken, answer: URLSearchParams): Profile;
}

/** Plain OAuth 2: the profile comes from the provider's API. */
export interface OAuth2Definition<Id extends string = string> extends CommonDefinition<Id> {
  kind: 'oauth2';
  profile(issuer: string, get: ApiGet): Promise<Profile>;
}

/** Everything the flow needs to know about one provider; one file per provider holds it. */
export type ProviderDefinition<Id extends string = string> =
  | OidcDefinition<Id>
  | OAuth2Definition<Id>;

/** Keeps the literal id, so that the registry can check that each key names its definition. */
export function defineProvider<const Id extends string>(
  definition: ProviderDefinition<Id>,
): ProviderDefinition<Id> {
  return Object.freeze(definition);
}
