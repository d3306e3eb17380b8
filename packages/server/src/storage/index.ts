export { type Database, type DialectName, isUniqueViolation, openDatabase } from './database.js';
export { migrateToLatest, pendingMigrations } from './migrations/index.js';
export type * from './schema.js';
