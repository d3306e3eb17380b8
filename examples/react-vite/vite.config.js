import { defineConfig, loadEnv } from 'vite';
import { meRoute } from './api.js';

// The tiny API runs inside Vite's own server (dev and preview), so one command starts the app.
function api(env) {
  const mount = (server) => {
    server.middlewares.use('/api/me', meRoute(env));
  };
  return { name: 'api', configureServer: mount, configurePreviewServer: mount };
}

export default defineConfig(({ mode }) => ({
  plugins: [api(loadEnv(mode, import.meta.dirname, 'LATCHKEY_'))],
  server: { port: 5173, strictPort: true },
  preview: { port: 5173, strictPort: true },
}));
