export { interactionStartedAt } from './adapter.js';
export { type AppCaller, AppCredentials } from './app-credentials.js';
export {
  APP_TYPES,
  type App,
  type AppUpdate,
  createApp,
  deleteApp,
  getApp,
  listApps,
  rotateAppSecret,
  updateApp,
} from './apps.service.js';
