import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { type TSchema, Type } from 'typebox';
import { defaults } from '../../config/defaults.js';

/** The admin area's path parameters, checked as the REST routes' are (a bad one gets the error page). */
const id = Type.String({ maxLength: defaults.fields.idMaxLength });
const provider = Type.String({ maxLength: defaults.fields.idMaxLength });

export const TenantParams = Type.Object({ tenantId: id });
export const KeyParams = Type.Object({ tenantId: id, keyId: id });
export const AppParams = Type.Object({ tenantId: id, appId: id });
export const EndpointParams = Type.Object({ tenantId: id, endpointId: id });
export const DeliveryParams = Type.Object({ tenantId: id, endpointId: id, deliveryId: id });
export const UserParams = Type.Object({ tenantId: id, userId: id });
export const FactorParams = Type.Object({ tenantId: id, userId: id, factorId: id });
export const SessionParams = Type.Object({ tenantId: id, userId: id, sessionId: id });
export const ProviderParams = Type.Object({ tenantId: id, provider });
/** A test's state is cut to the longest state there is, as the callback cuts it. */
export const TestParams = Type.Object({ tenantId: id, provider, state: Type.String() });

/** Route options of an admin page with these path parameters (pages stay out of the API document). */
export const withParams = <T extends TSchema>(params: T) => ({ schema: { hide: true, params } });

/** The admin scope with typed parameters. */
export const typed = (scope: FastifyInstance) => scope.withTypeProvider<TypeBoxTypeProvider>();
