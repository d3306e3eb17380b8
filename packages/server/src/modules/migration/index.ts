export { type ExportedUser, exportUsers } from './export.service.js';
export {
  type ImportDeps,
  type ImportOptions,
  type ImportProgress,
  type ImportSummary,
  importUsers,
  type ReportKind,
} from './import.service.js';
export { IMPORT_SOURCES, type ImportSource, PARSERS } from './parsers/index.js';
export type {
  FirebaseHashParameters,
  ImportedUser,
  ImportRow,
  Parser,
  ParserOptions,
  RowRefusal,
} from './types.js';
