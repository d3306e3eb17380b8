export {
  createOperatorKey,
  listOperatorKeys,
  OPERATOR_KEY_PREFIX,
  type OperatorKey,
  resolveOperatorKey,
  revokeOperatorKey,
} from './operator-keys.service.js';
