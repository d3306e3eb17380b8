import {
  createLatchkeySession,
  type LatchkeySession,
  sessionConfigFromEnv,
} from '@latchkey/node/session';

let instance: LatchkeySession | undefined;

/**
 * The app's one cookie session (docs/design.md §15), made on first use from the five
 * variables: never at import, so `next build` needs none of them.
 */
export function latchkey(): LatchkeySession {
  instance ??= createLatchkeySession(sessionConfigFromEnv());
  return instance;
}

/** The header the middleware forwards with the path a signed-out visitor comes back to. */
export const RETURN_TO_HEADER = 'x-latchkey-return-to';
