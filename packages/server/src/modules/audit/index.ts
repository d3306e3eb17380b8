export {
  type AuditEntry,
  type AuditEvent,
  type AuditFilter,
  queryAudit,
  recordAudit,
} from './audit.js';
