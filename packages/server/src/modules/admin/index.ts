export { auditChange, tenantForAdmin, tenantScope, visibleTenants } from './access.js';
export {
  type Admin,
  countAdmins,
  createAdmin,
  deleteAdmin,
  listAdmins,
  resetAdminPassword,
} from './accounts.service.js';
export {
  type AdminSession,
  type AdminSignInDeps,
  adminSession,
  needsReauth,
  reauthenticate,
  signInAdmin,
  signOutAdmin,
} from './admin-sign-in.service.js';
