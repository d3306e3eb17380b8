import express from 'express';
import { auth } from 'express-oauth2-jwt-bearer';

// LATCHKEY_ISSUER:   {auth_url}/t/{tenant_id}
// LATCHKEY_AUDIENCE: {auth_url}/t/{tenant_id}/api, or what `latchkey tenant update --audience` set
export const app = express();

app.use(
  auth({
    issuerBaseURL: process.env.LATCHKEY_ISSUER,
    audience: process.env.LATCHKEY_AUDIENCE,
    tokenSigningAlg: 'RS256',
  }),
);

app.get('/api/me', (req, res) => {
  res.json({ userId: req.auth?.payload.sub, email: req.auth?.payload.email });
});
