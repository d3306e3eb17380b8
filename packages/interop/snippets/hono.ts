import { Hono } from 'hono';
import { jwk } from 'hono/jwk';
import type { JwtVariables } from 'hono/jwt';

const issuer = `${process.env.LATCHKEY_ISSUER}`; // {auth_url}/t/{tenant_id}
const audience = `${process.env.LATCHKEY_AUDIENCE}`; // {auth_url}/t/{tenant_id}/api unless set

type Claims = { sub: string; email: string };
export const app = new Hono<{ Variables: JwtVariables<Claims> }>();

app.use(
  '/api/*',
  jwk({
    jwks_uri: `${issuer}/.well-known/jwks.json`,
    alg: ['RS256'],
    // RFC 9068 section 4: an access token's header says typ "at+jwt". Without this option
    // Hono accepts only typ "JWT", and so refuses every Latchkey token.
    verification: { typ: 'at+jwt', iss: issuer, aud: audience },
  }),
);

app.get('/api/me', (c) => {
  const claims = c.get('jwtPayload');
  return c.json({ userId: claims.sub, email: claims.email });
});
