import { Type } from 'typebox';
import { defaults } from '../../config/defaults.js';

export const UserModel = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    email: Type.String(),
    name: Type.Union([Type.String(), Type.Null()]),
    metadata: Type.Record(Type.String(), Type.Unknown()),
    roles: Type.Array(Type.String()),
    emailVerified: Type.Boolean(),
    disabled: Type.Boolean(),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'User', title: 'User' },
);

export const SessionModel = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    userId: Type.String({ format: 'uuid' }),
    createdAt: Type.String({ format: 'date-time' }),
    lastUsedAt: Type.String({ format: 'date-time' }),
    expiresAt: Type.String({ format: 'date-time' }),
    revokedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    revokedReason: Type.Union([Type.String(), Type.Null()]),
    ip: Type.Union([Type.String(), Type.Null()]),
    userAgent: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'Session', title: 'Session' },
);

export const TokenResponse = Type.Object(
  {
    accessToken: Type.String({
      description: 'RS256 JWT (typ at+jwt); verify locally or introspect',
    }),
    tokenType: Type.Literal('Bearer'),
    expiresIn: Type.Integer({ description: 'Seconds until the access token expires' }),
    refreshToken: Type.String({ description: 'Opaque; works once: each use returns a new one' }),
    sessionId: Type.String({ format: 'uuid' }),
    user: Type.Unsafe<unknown>({ $ref: 'User#' }),
  },
  { additionalProperties: false },
);

export const userRef = Type.Unsafe<unknown>({ $ref: 'User#' });
export const sessionRef = Type.Unsafe<unknown>({ $ref: 'Session#' });
export const UserParams = Type.Object({
  userId: Type.String({ maxLength: defaults.fields.idMaxLength }),
});

export const FactorModel = Type.Object(
  {
    id: Type.String({
      description:
        "A UUID (an app's or a passkey's); the recovery codes, one factor, are recovery_code",
    }),
    type: Type.Union([
      Type.Literal('totp'),
      Type.Literal('passkey'),
      Type.Literal('recovery_code'),
    ]),
    name: Type.String(),
    confirmed: Type.Boolean({
      description: 'An authenticator app is live once a code confirms it',
    }),
    createdAt: Type.String({ format: 'date-time' }),
    lastUsedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    remaining: Type.Optional(Type.Integer({ description: 'Recovery codes left unused' })),
  },
  { $id: 'Factor', title: 'Factor' },
);
export const factorRef = Type.Unsafe<unknown>({ $ref: 'Factor#' });
