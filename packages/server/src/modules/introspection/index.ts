export { type Introspection, type IntrospectionDeps, introspect } from './introspection.service.js';
