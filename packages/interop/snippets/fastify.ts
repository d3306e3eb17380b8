import Fastify from 'fastify';
import { createRemoteJWKSet, type JWTPayload, jwtVerify } from 'jose';

declare module 'fastify' {
  interface FastifyRequest {
    auth?: JWTPayload;
  }
}

const issuer = `${process.env.LATCHKEY_ISSUER}`; // {auth_url}/t/{tenant_id}
const audience = `${process.env.LATCHKEY_AUDIENCE}`; // {auth_url}/t/{tenant_id}/api unless set
const keys = createRemoteJWKSet(new URL(`${issuer}/.well-known/jwks.json`));

export const app = Fastify();
app.decorateRequest('auth', undefined);

app.addHook('onRequest', async (request, reply) => {
  const token = /^Bearer ([\w.~+/-]+=*)$/i.exec(request.headers.authorization ?? '')?.[1];
  try {
    if (!token) throw new Error('no Bearer token');
    const verified = await jwtVerify(token, keys, {
      issuer,
      audience,
      typ: 'at+jwt',
      algorithms: ['RS256'],
    });
    request.auth = verified.payload;
  } catch {
    return reply.code(401).header('www-authenticate', 'Bearer error="invalid_token"').send();
  }
});

app.get('/api/me', async (request) => ({ userId: request.auth?.sub, email: request.auth?.email }));
