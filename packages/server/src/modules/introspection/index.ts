export {
  type ActiveClaims,
  type Introspection,
  type IntrospectionDeps,
  introspect,
  introspectionJson,
} from './introspection.service.js';
export { VerifiedTokens } from './verified-tokens.js';
