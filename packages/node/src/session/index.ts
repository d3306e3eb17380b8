/**
 * `@latchkey/node/session`: the cookie session of docs/design.md §15, Web-standard only
 * (Request, Response, fetch, Web Crypto), so it runs in Node and in edge runtimes.
 */

export { LatchkeyError } from '../errors.js';
export type { LatchkeySessionConfig, ResolvedSessionConfig } from './config.js';
export { sessionConfigFromEnv } from './config.js';
export type { CookieSource } from './cookies.js';
export {
  createLatchkeySession,
  type LatchkeySession,
  type Session,
  type SessionResult,
} from './session.js';
