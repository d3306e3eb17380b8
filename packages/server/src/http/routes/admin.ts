import type { FastifyInstance } from 'fastify';
import { appPages } from '../admin/app-pages.js';
import { adminAssets } from '../admin/assets.js';
import { auditPages } from '../admin/audit-pages.js';
import { brandingPages } from '../admin/branding-pages.js';
import { keyPages } from '../admin/key-pages.js';
import { securityPages } from '../admin/security-pages.js';
import { sessionPages } from '../admin/session-pages.js';
import { setUpAdminScope } from '../admin/setup.js';
import { socialPages } from '../admin/social-pages.js';
import { tenantPages } from '../admin/tenant-pages.js';
import { userPages } from '../admin/user-pages.js';
import { webhookPages } from '../admin/webhook-pages.js';
import type { AppContext } from '../context.js';

/**
 * The admin area at `{auth_url}/admin` (docs/design.md §12): server-rendered pages with
 * one small script (copy buttons, the Branding preview); every page works without it.
 */
export function adminRoutes(app: FastifyInstance, ctx: AppContext) {
  app.register(async (scope) => {
    await setUpAdminScope(scope, ctx);
    adminAssets(scope);
    sessionPages(scope, ctx);
    tenantPages(scope, ctx);
    brandingPages(scope, ctx);
    socialPages(scope, ctx);
    securityPages(scope, ctx);
    keyPages(scope, ctx);
    appPages(scope, ctx);
    webhookPages(scope, ctx);
    userPages(scope, ctx);
    auditPages(scope, ctx);
  });
}
