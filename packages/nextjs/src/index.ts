/**
 * @latchkey/nextjs on the server (docs/design.md §15): the middleware, `auth()`,
 * `currentUser()`, `protect()` and the route handler. Client components import
 * `@latchkey/nextjs/client`.
 */
export { handlers } from './handlers.js';
export {
  type LatchkeyMiddlewareOptions,
  latchkeyMiddleware,
  type RouteMatcher,
} from './middleware.js';
export {
  type Auth,
  auth,
  type Claims,
  currentUser,
  type LatchkeyUser,
  protect,
  type SignedInAuth,
} from './server.js';
