export {
  type Database,
  type DialectName,
  isDatabaseUnavailable,
  isUniqueViolation,
  openDatabase,
} from './database.js';
export { isUuid } from './ids.js';
export { migrateToLatest, pendingMigrations } from './migrations/index.js';
export { columnValues, prepared, type Values } from './prepared.js';
export type * from './schema.js';
export { type Publisher, type Tx, transact } from './transaction.js';
