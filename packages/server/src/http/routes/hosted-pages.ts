import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { emailLinkPages } from '../hosted/email-link-pages.js';
import { secondFactorPages } from '../hosted/second-factor-pages.js';
import { setUpHostedScope } from '../hosted/setup.js';
import { signInPages } from '../hosted/sign-in-pages.js';
import { signUpPages } from '../hosted/sign-up-page.js';
import { socialPages } from '../hosted/social-pages.js';

/**
 * The hosted pages of docs/design.md §19: sign-in, sign-up, password reset, e-mail
 * verification. They work without JavaScript (there is none), so the CSP forbids scripts.
 */
export function hostedPageRoutes(app: FastifyInstance, ctx: AppContext) {
  app.register(async (scope) => {
    await setUpHostedScope(scope, ctx);
    signInPages(scope, ctx);
    secondFactorPages(scope, ctx);
    signUpPages(scope, ctx);
    emailLinkPages(scope, ctx);
    socialPages(scope, ctx);
  });
}
