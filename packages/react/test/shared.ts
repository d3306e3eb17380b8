/** What the React suites share with their global setup (the real server). */

/** happy-dom's page origin under vitest: the tenant allows it. */
export const PAGE_ORIGIN = 'http://localhost:3000';
export const PASSWORD = 'correct horse battery staple';

export interface ServerSession {
  email: string;
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
}

declare module 'vitest' {
  export interface ProvidedContext {
    authUrl: string;
    /** Publishable keys of one tenant: each test takes its own, and so its own client. */
    publishableKeys: string[];
    /** Signed-in sessions of distinct users (password PASSWORD). */
    sessions: ServerSession[];
  }
}
