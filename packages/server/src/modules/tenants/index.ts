export {
  createTenant,
  getTenant,
  listTenants,
  type RateLimits,
  type Tenant,
  type TenantInput,
  toTenant,
  updateTenant,
} from './tenants.service.js';
