export { purgeExpired, type RetentionPolicy, startRetention } from './retention.service.js';
