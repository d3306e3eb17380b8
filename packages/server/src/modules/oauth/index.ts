export { type AppCaller, AppCredentials } from './app-credentials.js';
export {
  APP_TYPES,
  type App,
  createApp,
  deleteApp,
  getApp,
  listApps,
  rotateAppSecret,
} from './apps.service.js';
