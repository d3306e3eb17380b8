export type { Resolve } from './address-guard.js';
export { type DispatcherSettings, WebhookDispatcher } from './dispatcher.js';
export {
  createEndpoint,
  deleteEndpoint,
  getDelivery,
  getEndpoint,
  listDeliveries,
  listEndpoints,
  resendDelivery,
  rotateEndpointSecret,
  sealedWebhookSecrets,
  updateEndpoint,
  type WebhookAttempt,
  type WebhookDelivery,
  type WebhookDeliveryDetail,
  type WebhookEndpoint,
} from './endpoints.service.js';
export { EVENT_CATALOGUE, eventBody } from './events.js';
export { EVENT_TYPES, type EventType, emitEach, emitEvent } from './outbox.js';
