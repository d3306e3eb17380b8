export { type BulkResult, createTenantsFromLines } from './bulk.js';
export {
  openTenant,
  type ProvisionDeps,
  type ProvisionedTenant,
  provisionTenant,
} from './provisioning.service.js';
