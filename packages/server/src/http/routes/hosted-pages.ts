import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { createKit } from '../hosted/kit.js';
import { passwordPages } from '../hosted/password-pages.js';
import { socialPages } from '../hosted/social-pages.js';

/**
 * The hosted pages of reference section 4.3: sign-in, sign-up, password reset, e-mail
 * verification. They work without JavaScript (there is none), so the CSP forbids scripts.
 */
export function hostedPageRoutes(app: FastifyInstance, ctx: AppContext) {
  app.register(async (scope) => {
    const kit = await createKit(scope, ctx);
    passwordPages(scope, ctx, kit);
    socialPages(scope, ctx, kit);
  });
}
