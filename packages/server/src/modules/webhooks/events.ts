import { type TSchema, Type } from 'typebox';
import type { EventType } from './outbox.js';

/**
 * The catalogue of events (docs/design.md §17): when each is sent and its `data`, as the
 * OpenAPI document's `webhooks` section publishes them. `User` and `Factor` are the API's
 * own objects, named by their place in that document.
 */
const user = Type.Unsafe<unknown>({ $ref: '#/components/schemas/User' });
const factor = Type.Unsafe<unknown>({ $ref: '#/components/schemas/Factor' });
const uuid = Type.String({ format: 'uuid' });
const time = Type.String({ format: 'date-time' });

const FactorChange = Type.Object(
  { userId: uuid, factor },
  { additionalProperties: false, description: 'The user and the factor, never its secret' },
);

export const EVENT_CATALOGUE: Readonly<Record<EventType, { when: string; data: TSchema }>> = {
  'user.created': {
    when: 'A user was made (a sign-up, by any path).',
    data: user,
  },
  'user.updated': {
    when: "A user's profile, metadata, roles, e-mail verification or disabled state changed.",
    data: user,
  },
  'user.deleted': {
    when: 'A user was deleted.',
    data: Type.Object({ id: uuid, email: Type.String() }, { additionalProperties: false }),
  },
  'session.created': {
    when: 'A user signed in: a new session (server, browser or an OAuth client).',
    data: Type.Object(
      {
        id: uuid,
        userId: uuid,
        channel: Type.Union([
          Type.Literal('server'),
          Type.Literal('browser'),
          Type.Literal('oauth'),
        ]),
        createdAt: time,
        expiresAt: time,
        ip: Type.Union([Type.String(), Type.Null()]),
        userAgent: Type.Union([Type.String(), Type.Null()]),
        clientId: Type.Optional(
          Type.String({ description: 'The OAuth client (app_...) of an oauth session' }),
        ),
      },
      { additionalProperties: false },
    ),
  },
  'session.ended': {
    when: 'A session ended: signed out, revoked, or ended with its user, grant or app.',
    data: Type.Object(
      {
        id: uuid,
        userId: uuid,
        reason: Type.String({ description: 'Why it ended, e.g. signed_out' }),
        endedAt: time,
      },
      { additionalProperties: false },
    ),
  },
  'user.factor_added': {
    when: 'A second factor was set up: an authenticator app confirmed, a passkey, recovery codes.',
    data: FactorChange,
  },
  'user.factor_removed': {
    when: 'A second factor was removed.',
    data: FactorChange,
  },
};

/** The body of every delivery, as Standard Webhooks shapes it. */
export function eventBody(type: EventType): TSchema {
  return Type.Object(
    {
      type: Type.Literal(type),
      timestamp: Type.String({ format: 'date-time', description: 'When the event happened' }),
      data: EVENT_CATALOGUE[type].data,
    },
    { additionalProperties: false },
  );
}
