import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { accountFactorPages } from '../hosted/account-factor-pages.js';
import { accountPages } from '../hosted/account-pages.js';
import { emailLinkPages } from '../hosted/email-link-pages.js';
import { interactionPages } from '../hosted/interaction-pages.js';
import { passkeyRoutes } from '../hosted/passkey-routes.js';
import { secondFactorPages } from '../hosted/second-factor-pages.js';
import { setUpHostedScope } from '../hosted/setup.js';
import { signInPages } from '../hosted/sign-in-pages.js';
import { signUpPages } from '../hosted/sign-up-page.js';
import { socialPages } from '../hosted/social-pages.js';

/**
 * The hosted pages of docs/design.md §19: sign-in, sign-up, password reset, e-mail
 * verification, and the account page (docs/design.md §13). They work without JavaScript;
 * the passkey ceremony alone needs the one script their CSP allows (by nonce).
 */
export function hostedPageRoutes(app: FastifyInstance, ctx: AppContext) {
  app.register(async (scope) => {
    await setUpHostedScope(scope, ctx);
    signInPages(scope, ctx);
    secondFactorPages(scope, ctx);
    signUpPages(scope, ctx);
    emailLinkPages(scope, ctx);
    socialPages(scope, ctx);
    accountPages(scope, ctx);
    accountFactorPages(scope, ctx);
    passkeyRoutes(scope, ctx);
    interactionPages(scope, ctx);
  });
}
