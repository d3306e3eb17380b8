import { LatchkeyError, missingRedirectUrl } from './errors.js';
import { parseCallback, withoutFragment } from './fragment.js';
import { caller } from './http.js';
import { decodeJwt } from './jwt.js';
import { randomString, s256 } from './pkce.js';
import { openStore, type StorageKind } from './storage.js';
import type {
  HeadlessClient,
  LatchkeyOptions,
  LatchkeyState,
  Profile,
  PublicConfig,
  SignedInSession,
  SignInMethod,
  SignInOptions,
} from './types.js';

/** What a tab keeps; `expiresAt` is on this browser's clock, so a skewed clock does no harm. */
interface Tokens {
  accessToken: string;
  refreshToken: string;
  expiresAt: number;
}

interface TokenAnswer {
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
}

/** A message between tabs: the tokens every tab should hold now (null: signed out of `sid`). */
interface TabMessage {
  s: Tokens | null;
  sid?: string;
}

const PROVIDERS = ['google', 'facebook', 'github', 'apple', 'microsoft'];
/** getToken refreshes when fewer than this many milliseconds remain (docs/design.md §10.4). */
const REFRESH_MARGIN_MS = 30_000;

/** The state before the browser has read storage, and on a server (React's getServerSnapshot). */
export const SERVER_STATE: LatchkeyState = { isLoaded: false, isSignedIn: false, user: null };

let defaultAuthUrl = '';
/** The IIFE sets this to the origin that served the script. */
export function setDefaultAuthUrl(url: string): void {
  defaultAuthUrl = url;
}

/** Each key's client, and the options (server and storage) it was made with. */
const clients: Record<string, [HeadlessClient, string]> = {};

/**
 * The client of a publishable key: one per key on a page, shared by every caller, through
 * either entry point. Without the buttons: the main entry's Latchkey() adds `mount`.
 */
export function Latchkey(options: LatchkeyOptions): HeadlessClient {
  // Not `?.`: ES2017 has none, and esbuild's stand-in for it is longer (the script's budget).
  // biome-ignore lint/complexity/useOptionalChain: the script's byte budget
  const pk = options && options.publishableKey;
  const prefix = typeof pk === 'string' && pk.slice(0, 3);
  if (prefix !== 'pk_') {
    throw prefix === 'sk_'
      ? new LatchkeyError(
          'secret_key_in_browser',
          'That is a secret key: revoke it (latchkey keys revoke) and pass the publishable key (pk_…)',
        )
      : new LatchkeyError(
          'missing_publishable_key',
          "Call Latchkey({ publishableKey: 'pk_…' }) with your publishable key",
        );
  }
  const authUrl = (options.authUrl || defaultAuthUrl).replace(/\/+$/, '');
  if (!/^https?:\/\/[^/]/.test(authUrl)) {
    throw new LatchkeyError(
      'missing_auth_url',
      "Pass Latchkey({ authUrl: 'https://auth.example.com', … }), your Latchkey server",
    );
  }
  const storage = options.storage || 'local';
  const made = `${authUrl} ${storage}`;
  const known = clients[pk];
  if (known) {
    if (known[1] === made) return known[0];
    throw new LatchkeyError(
      'invalid_option',
      `Latchkey() already made a client for ${pk} with other options; share that one`,
    );
  }
  const client = createClient(pk, authUrl, storage);
  clients[pk] = [client, made];
  return client;
}

function createClient(pk: string, authUrl: string, kind: StorageKind): HeadlessClient {
  const store = openStore(kind);
  const call = caller(authUrl, pk);
  // The state and PKCE verifier of a sign-in belong to the tab that started it.
  const pending = openStore('session');
  const KEY = `latchkey:${pk}`;
  const PENDING = `${KEY}:pending`;
  const listeners: ((state: LatchkeyState) => void)[] = [];
  // Browsers only: on a server (Node has BroadcastChannel) it would keep the process alive.
  const browser = typeof window === 'object';
  const channel =
    browser && typeof BroadcastChannel === 'function' ? new BroadcastChannel(KEY) : null;
  let tokens = read();
  /** The signed-in user's profile (GET /v1/client/user), and the access token it was asked with. */
  let profile: Profile | null = null;
  let asked = '';
  /** Set by publish() below, before anything reads it. */
  let state: LatchkeyState;
  /** Bumped at sign-out: an answer to a request sent before it is dropped. */
  let generation = 0;
  let inflight: Promise<string | null> | null = null;
  let callback: Promise<SignedInSession | null> | null = null;
  let config: Promise<PublicConfig> | null = null;

  /** JSON of storage, or undefined when it is not JSON. */
  function parse(raw: string | null) {
    try {
      return JSON.parse(raw as string);
    } catch {}
  }

  function read(): Tokens | null {
    const value = parse(store.get(KEY));
    return value && typeof value.refreshToken === 'string' ? value : null;
  }

  /** Makes the state of `tokens` and `profile` and tells the listeners. */
  function publish(): void {
    const user = tokens && decodeJwt(tokens.accessToken);
    if (user && profile && profile.id === user.sub) Object.assign(user, profile);
    state = { isLoaded: true, isSignedIn: !!user, user: user || null };
    for (const listener of listeners.slice()) listener(state);
  }

  /**
   * Asks for the profile with a fresh access token it has not asked with before: once after
   * sign-in or on load, again when the tokens change. A failure (an older server, the
   * network) leaves the token's claims alone.
   */
  function loadProfile(): void {
    const token = tokens && fresh(tokens) ? tokens.accessToken : '';
    if (!token || token === asked) return;
    asked = token;
    call<Profile>('/v1/client/user', undefined, token).then(
      (answer) => {
        // Signed out, or newer tokens asked again, meanwhile.
        if (asked !== token || !tokens) return;
        profile = answer;
        publish();
      },
      () => {},
    );
  }

  /** Makes `next` this tab's tokens, tells listeners, and other tabs when `share`. */
  function adopt(next: Tokens | null, share: boolean): void {
    // The same pair has its keys in one order: each was read from storage, made by
    // exchange() or sent by a tab that stored it.
    if (JSON.stringify(next) === JSON.stringify(tokens)) return;
    const sid = state.user ? state.user.sid : undefined;
    if (!next) {
      generation++;
      profile = null;
      asked = '';
    }
    tokens = next;
    if (next) store.set(KEY, JSON.stringify(next));
    else store.remove(KEY);
    if (share && channel) channel.postMessage({ s: next, sid } as TabMessage);
    publish();
    loadProfile();
  }

  if (channel) {
    channel.onmessage = (event: MessageEvent<TabMessage>) => {
      const m = event.data;
      if (!m || typeof m !== 'object') return;
      // A sign-out of another session (tabs with session or memory storage) is not ours.
      if (!m.s && m.sid && state.user && state.user.sid !== m.sid) return;
      adopt(m.s || null, false);
    };
  }
  if (browser && kind === 'local') {
    addEventListener('storage', (event) => {
      if (event.key === KEY || event.key === null) adopt(read(), false);
    });
  }

  /** Tokens for a grant (docs/design.md §10.3), `expiresAt` on this browser's clock. */
  const exchange = (body: Record<string, string>) =>
    call<TokenAnswer>('/v1/client/token', body).then(
      (answer): Tokens => ({
        accessToken: answer.accessToken,
        refreshToken: answer.refreshToken,
        expiresAt: Date.now() + answer.expiresIn * 1000,
      }),
    );

  const rejected = (error: unknown) =>
    error instanceof LatchkeyError && error.code === 'invalid_grant';

  const fresh = (t: Tokens) => t.expiresAt - Date.now() > REFRESH_MARGIN_MS;

  /**
   * One refresh in flight per tab, and no lock between tabs (a lock held by a tab that dies
   * can hang the others). Two tabs that rotate the same token at once both succeed: the
   * server accepts a token again for a few seconds after its rotation.
   */
  async function refresh(again?: boolean): Promise<string | null> {
    const gen = generation;
    const sent = tokens;
    if (!sent) return null;
    let next: Tokens | null = null;
    try {
      next = await exchange({ grant_type: 'refresh_token', refresh_token: sent.refreshToken });
    } catch (error) {
      if (gen !== generation) return null;
      if (!rejected(error)) throw error;
      // Another tab may have rotated it and stored its tokens: take those.
      const stored = read();
      if (!again && stored && stored.refreshToken !== sent.refreshToken) {
        adopt(stored, false);
        return fresh(stored) ? stored.accessToken : refresh(true);
      }
    }
    if (gen !== generation) return null;
    // Refused: signed out in every tab.
    adopt(next, true);
    return next ? next.accessToken : null;
  }

  async function getToken(): Promise<string | null> {
    // Another tab's write that no message announced (e.g. it closed right after).
    adopt(read(), false);
    if (!tokens) return null;
    if (fresh(tokens)) return tokens.accessToken;
    if (!inflight) {
      const done = () => {
        inflight = null;
      };
      inflight = refresh();
      inflight.then(done, done);
    }
    return inflight;
  }

  async function signInWith(method: SignInMethod, options: SignInOptions): Promise<void> {
    // biome-ignore lint/complexity/useOptionalChain: the script's byte budget, as in Latchkey()
    const redirectUrl = options && options.redirectUrl;
    if (!redirectUrl) {
      throw missingRedirectUrl();
    }
    if (method !== 'email' && PROVIDERS.indexOf(method) < 0) {
      throw new LatchkeyError(
        'unknown_provider',
        `${method} is not a provider; use one of ${PROVIDERS.join(', ')} or 'email'`,
      );
    }
    const verifier = randomString();
    const st = randomString();
    const challenge = await s256(verifier);
    // Where the user started, to go back there after the callback.
    pending.set(PENDING, JSON.stringify({ state: st, verifier, from: location.href }));
    const query = `${new URLSearchParams({
      pk,
      redirect_url: new URL(redirectUrl, location.href).href,
      state: st,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    })}`;
    location.assign(
      method === 'email'
        ? `${authUrl}/sign-in?${query}`
        : `${authUrl}/oauth/${method}/start?q=${encodeURIComponent(query)}`,
    );
  }

  async function finish(params: Record<string, string>): Promise<SignedInSession> {
    const started: { state?: string; verifier?: string; from?: string } =
      parse(pending.get(PENDING)) || {};
    pending.remove(PENDING);
    if (params.error) {
      throw new LatchkeyError(
        'sign_in_failed',
        `Sign-in did not complete (${params.error_description || params.error}); start it again`,
      );
    }
    if (!started.verifier || params.state !== started.state) {
      throw new LatchkeyError(
        'state_mismatch',
        'This sign-in answer was not started in this tab; start sign-in again',
      );
    }
    if (!params.code) {
      throw new LatchkeyError('sign_in_failed', 'The sign-in answer has no code; start it again');
    }
    let next: Tokens;
    try {
      next = await exchange({
        grant_type: 'authorization_code',
        code: params.code,
        code_verifier: started.verifier,
      });
    } catch (error) {
      throw rejected(error)
        ? new LatchkeyError(
            'invalid_grant',
            'This sign-in answer was used already or expired; start sign-in again',
          )
        : error;
    }
    adopt(next, true);
    // Same origin only: never a way off the site.
    const home = `${location.origin}/`;
    const from = started.from || '';
    return {
      user: state.user as NonNullable<LatchkeyState['user']>,
      accessToken: next.accessToken,
      returnTo: from.indexOf(home) ? home : from,
    };
  }

  function handleRedirectCallback(url?: string): Promise<SignedInSession | null> {
    const params = parseCallback(url || location.href);
    // Called twice for one answer (React's strict mode): the second call shares the first.
    if (!params) return callback || Promise.resolve(null);
    // Tokens leave the address bar (and its history entry) before anything else can read them.
    if (parseCallback(location.href)) {
      history.replaceState(history.state, '', withoutFragment(location.href));
    }
    callback = finish(params);
    return callback;
  }

  publish();
  loadProfile();

  async function signOut(): Promise<void> {
    const t = tokens;
    adopt(null, true);
    if (t) await call('/v1/client/sign-out', { refresh_token: t.refreshToken });
  }

  function addListener(listener: (state: LatchkeyState) => void): () => void {
    listeners.push(listener);
    return () => {
      const at = listeners.indexOf(listener);
      if (at >= 0) listeners.splice(at, 1);
    };
  }

  return {
    publishableKey: pk,
    authUrl,
    signInWith,
    handleRedirectCallback,
    isSignedIn: () => state.isSignedIn,
    getUser: () => state.user,
    getToken,
    signOut,
    addListener,
    subscribe: addListener,
    getState: () => state,
    getConfig() {
      if (!config) {
        config = call<PublicConfig>(`/public/config?pk=${encodeURIComponent(pk)}`);
        config.catch(() => {
          config = null;
        });
      }
      return config;
    },
  };
}
