import * as oauth from 'oauth4webapi';
import { isLoopbackHost } from '../config.js';
import { LatchkeyError } from '../errors.js';
import type { ResolvedSessionConfig } from './config.js';

/** Discovery is fetched again after this long, so a new endpoint or key URL is picked up. */
const DISCOVERY_MAX_AGE_MS = 60 * 60_000;
const TIMEOUT_MS = 10_000;

export interface TokenSet {
  accessToken: string;
  refreshToken: string | undefined;
  idToken: string | undefined;
}

/**
 * The relying party's side of docs/design.md §14, through oauth4webapi: discovery (cached),
 * the authorization request, the code exchange and the refresh (client_secret_basic), and
 * RFC 7009 revocation. Every check of the responses (state, `iss`, the ID token, `nonce`) is
 * the library's.
 */
export class ProviderClient {
  #metadata: { as: Promise<oauth.AuthorizationServer>; at: number } | undefined;

  constructor(private readonly config: ResolvedSessionConfig) {}

  get #options() {
    const { issuer, fetch } = this.config;
    return {
      [oauth.customFetch]: fetch,
      // http only for an issuer on this machine (development), as the config allows.
      [oauth.allowInsecureRequests]: issuer.protocol === 'http:' && isLoopbackHost(issuer.hostname),
      signal: () => AbortSignal.timeout(TIMEOUT_MS),
    };
  }

  get #client(): oauth.Client {
    const { clientId, now, clockToleranceSeconds } = this.config;
    return {
      client_id: clientId,
      [oauth.clockSkew]: Math.round((now() - Date.now()) / 1000),
      [oauth.clockTolerance]: clockToleranceSeconds,
    };
  }

  get #auth() {
    return oauth.ClientSecretBasic(this.config.clientSecret);
  }

  metadata(): Promise<oauth.AuthorizationServer> {
    const cached = this.#metadata;
    if (cached && Date.now() - cached.at < DISCOVERY_MAX_AGE_MS) return cached.as;
    const as = (async () => {
      const { issuer } = this.config;
      try {
        const response = await oauth.discoveryRequest(issuer, {
          algorithm: 'oidc',
          ...this.#options,
        });
        return await oauth.processDiscoveryResponse(issuer, response);
      } catch (cause) {
        throw new LatchkeyError('api_unreachable', {
          reason: `The OpenID Provider's discovery document at ${issuer.href}/.well-known/openid-configuration could not be read.`,
          action:
            'Check LATCHKEY_ISSUER ({auth_url}/t/{tenant_id}) and that Latchkey is reachable.',
          cause,
        });
      }
    })();
    this.#metadata = { as, at: Date.now() };
    as.catch(() => {
      if (this.#metadata?.as === as) this.#metadata = undefined;
    });
    return as;
  }

  async authorizationUrl(params: {
    redirectUri: string;
    codeVerifier: string;
    state: string;
    nonce: string;
  }): Promise<URL> {
    const as = await this.metadata();
    const url = new URL(as.authorization_endpoint ?? `${this.config.issuer.href}/oauth/authorize`);
    const query: Record<string, string> = {
      client_id: this.config.clientId,
      response_type: 'code',
      redirect_uri: params.redirectUri,
      scope: this.config.scope,
      code_challenge: await oauth.calculatePKCECodeChallenge(params.codeVerifier),
      code_challenge_method: 'S256',
      state: params.state,
      nonce: params.nonce,
    };
    for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
    return url;
  }

  /** Validates the callback (state, `iss`), exchanges the code, validates the ID token and nonce. */
  async exchange(
    callback: URL,
    expected: { state: string; nonce: string; codeVerifier: string; redirectUri: string },
  ): Promise<TokenSet> {
    const as = await this.metadata();
    const client = this.#client;
    const params = oauth.validateAuthResponse(as, client, callback, expected.state);
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      this.#auth,
      params,
      expected.redirectUri,
      expected.codeVerifier,
      this.#options,
    );
    const result = await oauth.processAuthorizationCodeResponse(as, client, response, {
      expectedNonce: expected.nonce,
      requireIdToken: true,
    });
    return tokenSet(result);
  }

  async refresh(refreshToken: string): Promise<TokenSet> {
    const as = await this.metadata();
    const client = this.#client;
    const response = await oauth.refreshTokenGrantRequest(
      as,
      client,
      this.#auth,
      refreshToken,
      this.#options,
    );
    return tokenSet(await oauth.processRefreshTokenResponse(as, client, response));
  }

  /** RFC 7009: revoking the refresh token revokes its grant and ends its Latchkey session. */
  async revoke(refreshToken: string): Promise<void> {
    const as = await this.metadata();
    const response = await oauth.revocationRequest(as, this.#client, this.#auth, refreshToken, {
      ...this.#options,
      additionalParameters: { token_type_hint: 'refresh_token' },
    });
    await oauth.processRevocationResponse(response);
  }

  /**
   * RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0 section 2), or null. The app
   * is named by `client_id`, not `id_token_hint`: no token goes into a URL (the provider's
   * page asks the user either way).
   */
  async endSessionUrl(): Promise<URL | null> {
    const as = await this.metadata();
    if (!as.end_session_endpoint) return null;
    const url = new URL(as.end_session_endpoint);
    url.searchParams.set('client_id', this.config.clientId);
    url.searchParams.set('post_logout_redirect_uri', this.config.appBaseUrl);
    return url;
  }

  jwksUri(as: oauth.AuthorizationServer): URL {
    return new URL(as.jwks_uri ?? `${this.config.issuer.href}/.well-known/jwks.json`);
  }
}

/** The provider refused the refresh token: the grant or the session has ended. */
export function isGrantEnded(error: unknown): boolean {
  return error instanceof oauth.ResponseBodyError && error.error === 'invalid_grant';
}

/** Why a callback failed, in words a page may show (never a token). */
export function callbackProblem(error: unknown): string {
  if (error instanceof oauth.AuthorizationResponseError) return error.error;
  if (error instanceof oauth.ResponseBodyError) return error.error;
  if (error instanceof LatchkeyError) return error.code;
  return 'invalid_response';
}

function tokenSet(result: oauth.TokenEndpointResponse): TokenSet {
  return {
    accessToken: result.access_token,
    refreshToken: result.refresh_token,
    idToken: result.id_token,
  };
}

export const randomState = oauth.generateRandomState;
export const randomNonce = oauth.generateRandomNonce;
export const randomCodeVerifier = oauth.generateRandomCodeVerifier;
