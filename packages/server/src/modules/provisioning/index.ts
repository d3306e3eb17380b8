export {
  openTenant,
  type ProvisionDeps,
  type ProvisionedTenant,
  provisionTenant,
} from './provisioning.service.js';
