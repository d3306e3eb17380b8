import type { StorageKind } from './storage.js';

export type ProviderId = 'google' | 'facebook' | 'github' | 'apple' | 'microsoft';
/** A provider, or `'email'` for the hosted e-mail and password page. */
export type SignInMethod = ProviderId | 'email';

export interface LatchkeyOptions {
  /** The tenant's publishable key, `pk_test_…` or `pk_live_…`. */
  publishableKey: string;
  /** The Latchkey server; the script tag's own origin by default. */
  authUrl?: string;
  /** Where tokens are kept: `'local'` (default, survives reloads), `'session'`, `'memory'`. */
  storage?: StorageKind;
}

/**
 * The user's profile, `GET /v1/client/user` (docs/design.md §18.4). Of the metadata set by
 * your server only `metadata.public` reaches the browser, as `publicMetadata`.
 */
export interface Profile {
  id: string;
  email: string;
  emailVerified: boolean;
  name: string | null;
  picture: string | null;
  publicMetadata: Record<string, unknown>;
  createdAt: string;
}

/**
 * The decoded access token payload (docs/design.md §5.1), unverified in the browser, and
 * once it has arrived (a moment after sign-in or load) the profile's fields.
 */
export interface User extends Partial<Profile> {
  sub: string;
  email: string;
  tid: string;
  sid: string;
  roles: string[];
  scope: string;
  iat: number;
  exp: number;
  [claim: string]: unknown;
}

/** What a UI renders from; a new object exactly when something changed. */
export interface LatchkeyState {
  /** False until the browser has read storage (always false on a server). */
  readonly isLoaded: boolean;
  readonly isSignedIn: boolean;
  readonly user: User | null;
}

export interface SignInOptions {
  /** Where the browser comes back to: an allowed origin of the tenant, no fragment. */
  redirectUrl: string;
}

export interface MountOptions extends SignInOptions {
  /** A CSP nonce for the one `<style>` element used where constructable style sheets are missing. */
  nonce?: string;
}

export interface PublicConfig {
  tenantId: string;
  name: string;
  environment: string;
  branding: { logoUrl: string | null; primaryColor: string | null };
  /**
   * `mode: 'development'` (development tenants only): the button leads to Latchkey's own
   * page standing in for the provider; the buttons mark it "dev".
   */
  providers: { id: ProviderId; name: string; mode?: 'development' | 'live' }[];
  passwordEnabled: boolean;
  signInUrl: string;
}

export interface SignedInSession {
  user: User;
  accessToken: string;
  /** The page (this origin) where the sign-in started: where to send the user now. */
  returnTo: string;
}

/** The client without the sign-in buttons: what `@latchkey/js/client` gives. */
export interface HeadlessClient {
  readonly publishableKey: string;
  readonly authUrl: string;
  /** Starts a sign-in: the browser leaves for the provider (or the e-mail page) and comes back. */
  signInWith(method: SignInMethod, options: SignInOptions): Promise<void>;
  /** Finishes a sign-in on the redirect page; null when the URL carries no sign-in answer. */
  handleRedirectCallback(url?: string): Promise<SignedInSession | null>;
  isSignedIn(): boolean;
  /** The token's claims, with the profile's fields once they have arrived; null when signed out. */
  getUser(): User | null;
  /** A fresh access token (refreshed when under 30 s remain), or null when signed out. */
  getToken(): Promise<string | null>;
  /** Ends the session on the server and in every tab. */
  signOut(): Promise<void>;
  /**
   * Called with the new state after sign-in, refresh and sign-out, in every tab (not at once);
   * returns the function that removes the listener. With `getState` it is what React's
   * `useSyncExternalStore(client.addListener, client.getState, () => SERVER_STATE)` takes.
   */
  addListener(listener: (state: LatchkeyState) => void): () => void;
  /** @deprecated The same function as `addListener` (its former name for React); use `addListener`. */
  subscribe(onChange: () => void): () => void;
  /** The current state: the same object until something changes. */
  getState(): LatchkeyState;
  /** The tenant's public configuration (fetched once per client). */
  getConfig(): Promise<PublicConfig>;
}

/** The client of the main entry point and the script tag: the same, with the buttons. */
export interface LatchkeyClient extends HeadlessClient {
  /** Renders the sign-in buttons into `target`; returns a function that removes them. */
  mount(target: string | Element, options: MountOptions): () => void;
}
