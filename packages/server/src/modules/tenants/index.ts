export {
  checkTenantUpdate,
  createTenant,
  getTenant,
  isAllowedOrigin,
  listTenants,
  type RateLimits,
  schemeProblem,
  type Tenant,
  type TenantInput,
  toTenant,
  updateTenant,
} from './tenants.service.js';
