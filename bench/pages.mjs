// Hosted sign-in page: bytes transferred and render rate of GET /sign-in on the real server,
// beside a bare node:http server answering a static page of the same size (same run, same
// machine). The budget: under 30 KB without the logo, no framework, no script.
// The script tag's library: GET /sdk/latchkey.js (brotli, as browsers ask) beside a bare
// node:http server sending the same compressed bytes from memory. The budget: at least half.
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { shownAtLeast } from './lib.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const MAIN = join(ROOT, 'packages/server/dist/latchkey.mjs');
const RESULTS = join(ROOT, 'bench/results/pages.json');
const autocannon = createRequire(join(ROOT, 'packages/server/package.json'))('autocannon');
const CONNECTIONS = 16;
const tmp = mkdtempSync(join(os.tmpdir(), 'latchkey-bench-pages-'));
const children = [];

const freePort = () =>
  new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

async function waitFor(url) {
  for (let i = 0; i < 150; i++) {
    if (
      await fetch(url).then(
        (r) => r.status < 500,
        () => false,
      )
    )
      return;
    await sleep(100);
  }
  throw new Error(`${url} did not come up`);
}

async function load(url, headers = {}) {
  await autocannon({ url, headers, connections: CONNECTIONS, duration: 2 });
  const r = await autocannon({ url, headers, connections: CONNECTIONS, duration: 8 });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx };
}

async function main() {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const env = {
    ...process.env,
    DATABASE_URL: `sqlite:${join(tmp, 'bench.db')}`,
    LATCHKEY_SECRET: randomBytes(32).toString('base64url'),
    LOG_LEVEL: 'warn',
    PORT: String(port),
    PUBLIC_URL: url,
  };
  const created = JSON.parse(
    execFileSync(
      process.execPath,
      [MAIN, 'tenant', 'create', '--name', 'Bench', '--origin', 'http://localhost:5173', '--json'],
      { env },
    ).toString(),
  );
  const server = spawn(process.execPath, ['--max-semi-space-size=4', MAIN, 'serve'], {
    env,
    stdio: 'ignore',
  });
  children.push(server);
  await waitFor(`${url}/healthz`);
  const q = new URLSearchParams({
    pk: created.publishableKey,
    redirect_url: 'http://localhost:5173/callback',
  });
  const pageUrl = `${url}/sign-in?${q}`;
  const page = await fetch(pageUrl);
  const html = await page.text();
  const bytes = Buffer.byteLength(html);
  const headerBytes = [...page.headers].reduce((n, [k, v]) => n + k.length + v.length + 4, 0);
  const scripts = (html.match(/<script/g) ?? []).length;
  const pageResult = await load(pageUrl);

  const basePort = await freePort();
  const baseline = spawn(
    process.execPath,
    [
      '-e',
      `require('node:http').createServer((q,s)=>{s.writeHead(200,{'content-type':'text/html'});s.end(${JSON.stringify(html)})}).listen(${basePort},'127.0.0.1')`,
    ],
    { stdio: 'ignore' },
  );
  children.push(baseline);
  await sleep(300);
  const base = await load(`http://127.0.0.1:${basePort}/`);

  // The library: the same compressed bytes and headers from a bare server.
  const BR = { 'accept-encoding': 'br' };
  const sdkUrl = `${url}/sdk/latchkey.js`;
  // node:http, not fetch: fetch would decode the brotli body.
  const sdkBody = await new Promise((resolve, reject) =>
    get(sdkUrl, { headers: BR }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ headers: res.headers, bytes: Buffer.concat(chunks) }));
    }).on('error', reject),
  );
  const sdkHeaders = Object.fromEntries(
    [
      'content-type',
      'cache-control',
      'etag',
      'vary',
      'access-control-allow-origin',
      'cross-origin-resource-policy',
      'x-content-type-options',
      'content-encoding',
    ].map((h) => [h, sdkBody.headers[h]]),
  );
  const sdk = await load(sdkUrl, BR);
  const sdkBasePort = await freePort();
  const sdkBaseline = spawn(
    process.execPath,
    [
      '-e',
      `const b=Buffer.from(${JSON.stringify(sdkBody.bytes.toString('base64'))},'base64');require('node:http').createServer((q,s)=>{s.writeHead(200,${JSON.stringify(sdkHeaders)});s.end(b)}).listen(${sdkBasePort},'127.0.0.1')`,
    ],
    { stdio: 'ignore' },
  );
  children.push(sdkBaseline);
  await sleep(300);
  const sdkBase = await load(`http://127.0.0.1:${sdkBasePort}/`, BR);

  console.log(
    `\nHosted sign-in page (${os.availableParallelism()} cores, node ${process.version})`,
  );
  console.log(
    `  transferred: ${bytes} bytes of HTML + ${headerBytes} bytes of headers, ${scripts} scripts, no other resources (budget 30 KB)`,
  );
  console.log(
    `  bare node:http serving the same bytes (baseline): ${base.rps.toFixed(0)} req/s  p50 ${base.p50} ms  p99 ${base.p99} ms`,
  );
  console.log(
    `  GET /sign-in:                                     ${pageResult.rps.toFixed(0)} req/s  p50 ${pageResult.p50} ms  p99 ${pageResult.p99} ms  = ${((100 * pageResult.rps) / base.rps).toFixed(1)} % of baseline`,
  );
  console.log(`\nGET /sdk/latchkey.js (${sdkBody.bytes.length} bytes brotli)`);
  console.log(
    `  bare node:http serving the same bytes (baseline): ${sdkBase.rps.toFixed(0)} req/s  p50 ${sdkBase.p50} ms  p99 ${sdkBase.p99} ms`,
  );
  console.log(
    `  GET /sdk/latchkey.js:                             ${sdk.rps.toFixed(0)} req/s  p50 ${sdk.p50} ms  p99 ${sdk.p99} ms  = ${((100 * sdk.rps) / sdkBase.rps).toFixed(1)} % of baseline (budget: 50 %)`,
  );
  const total = bytes + headerBytes;
  console.log(
    `pages_sign_in_bytes=${total} (HTML and headers, ${scripts} scripts; budget 30 KB) ${total <= 30 * 1024 ? 'PASS' : 'FAIL'}`,
  );
  console.log(
    `pages_sdk/bare=${shownAtLeast(sdk.rps / sdkBase.rps, 0.5)} (the script, brotli, beside bare node:http sending the same bytes; budget >= 0.50) ${sdk.rps / sdkBase.rps >= 0.5 ? 'PASS' : 'FAIL'}`,
  );
  mkdirSync(dirname(RESULTS), { recursive: true });
  writeFileSync(
    RESULTS,
    `${JSON.stringify({ date: new Date().toISOString(), bytes, headerBytes, scripts, page: pageResult, baseline: base, sdk: { bytes: sdkBody.bytes.length, served: sdk, baseline: sdkBase } }, null, 2)}\n`,
  );
}

main()
  .catch((error) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(() => {
    for (const c of children) c.kill('SIGKILL');
    rmSync(tmp, { recursive: true, force: true });
  });
