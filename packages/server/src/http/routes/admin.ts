import type { FastifyInstance } from 'fastify';
import { adminAssets } from '../admin/assets.js';
import { sessionPages } from '../admin/session-pages.js';
import { setUpAdminScope } from '../admin/setup.js';
import { tenantPages } from '../admin/tenant-pages.js';
import type { AppContext } from '../context.js';

/**
 * The admin area at `{auth_url}/admin` (DESIGN section 12): server-rendered pages with
 * one small script (copy buttons, the Branding preview); every page works without it.
 */
export function adminRoutes(app: FastifyInstance, ctx: AppContext) {
  app.register(async (scope) => {
    await setUpAdminScope(scope, ctx);
    adminAssets(scope);
    sessionPages(scope, ctx);
    tenantPages(scope, ctx);
  });
}
