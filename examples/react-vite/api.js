// The app's own API: one route that only answers signed-in users. @latchkey/node asks Latchkey
// about every token (mode 'introspect'), so a signed-out session's token is refused at once.
import { createLatchkey } from '@latchkey/node';

/** GET /api/me as a node:http listener; `env` holds LATCHKEY_SECRET_KEY and LATCHKEY_API_URL. */
export function meRoute(env) {
  const latchkey = createLatchkey({
    secretKey: env.LATCHKEY_SECRET_KEY,
    apiUrl: env.LATCHKEY_API_URL || 'http://localhost:8787',
  });
  return latchkey.nodeHandler(
    (req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ userId: req.auth.sub, email: req.auth.email }));
    },
    { mode: 'introspect' },
  );
}
