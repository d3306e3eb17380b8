// A small HTTP client for the suite: one keep-alive agent per caller, a deadline on every
// request, and the times that the figures need (sent, answered). Everything on 127.0.0.1.
import http from 'node:http';

export function agent(maxSockets = 64) {
  return new http.Agent({ keepAlive: true, maxSockets });
}

/**
 * Resolves (never rejects) with { status, body, json, headers, ms, sentAt, error }.
 * `status` is 0 when no answer came (refused, reset, timed out: see `error`).
 * `sentAt` is when the whole request had been written (performance.now()), or null.
 */
export function request(base, method, path, options = {}) {
  const { headers = {}, body, timeoutMs = 5000, via } = options;
  const data =
    body === undefined
      ? undefined
      : typeof body === 'string' || Buffer.isBuffer(body)
        ? body
        : JSON.stringify(body);
  const started = performance.now();
  return new Promise((resolve) => {
    let sentAt = null;
    let done = false;
    const finish = (result) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve({ ms: performance.now() - started, started, sentAt, ...result });
    };
    const url = new URL(path, base);
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method,
        agent: via ?? false,
        headers: {
          ...(data === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) }),
          ...headers,
        },
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          let json;
          try {
            json = JSON.parse(text);
          } catch {}
          finish({ status: res.statusCode, headers: res.headers, body: text, json });
        });
        res.on('error', (error) => finish({ status: 0, error: error.code ?? error.message }));
      },
    );
    const timer = setTimeout(() => {
      finish({ status: 0, error: 'timeout' });
      req.destroy();
    }, timeoutMs);
    req.on('finish', () => {
      sentAt = performance.now();
    });
    req.on('error', (error) => finish({ status: 0, error: error.code ?? error.message }));
    req.end(data);
  });
}

/** A client bound to one server and one key. */
export function client(base, key, via = agent()) {
  const auth = key ? { authorization: `Bearer ${key}` } : {};
  const call = (method, path, body, options = {}) =>
    request(base, method, path, {
      ...options,
      body,
      via,
      headers: { ...auth, ...options.headers },
    });
  return {
    base,
    post: (path, body, options) => call('POST', path, body, options),
    get: (path, options) => call('GET', path, undefined, options),
    del: (path, options) => call('DELETE', path, undefined, options),
    patch: (path, body, options) => call('PATCH', path, body, options),
  };
}

/**
 * Runs `task(i)` on `concurrency` lanes until `shouldStop()` or `count` tasks are started.
 * Resolves with the tasks' results in start order.
 */
export async function lanes(
  concurrency,
  task,
  { count = Number.POSITIVE_INFINITY, shouldStop = () => false } = {},
) {
  const results = [];
  let next = 0;
  const lane = async () => {
    while (next < count && !shouldStop()) {
      const i = next++;
      results[i] = await task(i);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return results;
}

export const PASSWORD = 'correct horse battery staple';
