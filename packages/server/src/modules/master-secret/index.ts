export {
  type MasterSecret,
  openMasterSecret,
  rotateMasterSecret,
} from './master-secret.service.js';
