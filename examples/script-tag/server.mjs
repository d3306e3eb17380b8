// The script-tag example: a static site on http://localhost:5173 (the origin the demo tenant
// allows) whose pages load the library from the Latchkey server, under a strict CSP.
//   LATCHKEY_URL  the Latchkey server (default http://localhost:8787)
//   PORT          this site's port (default 5173)
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const AUTH_URL = (process.env.LATCHKEY_URL ?? 'http://localhost:8787').replace(/\/+$/, '');
const PORT = Number(process.env.PORT ?? 5173);
const FILES = {
  '/': ['index.html', 'text/html; charset=utf-8'],
  '/callback.html': ['callback.html', 'text/html; charset=utf-8'],
  '/app.js': ['app.js', 'text/javascript; charset=utf-8'],
  '/callback.js': ['callback.js', 'text/javascript; charset=utf-8'],
  '/style.css': ['style.css', 'text/css; charset=utf-8'],
};
// Scripts and connections: this site and the auth server only; no inline script or style.
const CSP = [
  "default-src 'none'",
  `script-src 'self' ${AUTH_URL}`,
  `connect-src ${AUTH_URL}`,
  "style-src 'self'",
  'img-src https: data:',
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const server = createServer((req, res) => {
  const file = FILES[(req.url ?? '/').split('?')[0]];
  if (!file) {
    res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found');
    return;
  }
  const body = readFileSync(new URL(file[0], import.meta.url), 'utf8').replaceAll(
    '{{LATCHKEY_URL}}',
    AUTH_URL,
  );
  res.writeHead(200, {
    'content-type': file[1],
    'content-security-policy': CSP,
    'cache-control': 'no-store',
  });
  res.end(body);
});

server.listen(PORT, 'localhost', () => {
  // PORT=0: the port the system chose.
  const { port } = server.address();
  console.log(`Script-tag example on http://localhost:${port} (Latchkey at ${AUTH_URL})`);
  console.log(
    'Open it with the publishable key npm start printed: http://localhost:5173/?pk=pk_test_…',
  );
});
