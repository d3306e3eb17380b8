// F8: a fixed, seeded fuzz run of every JSON endpoint that the server's OpenAPI document
// lists: wrong types, missing and unknown fields, huge and deep bodies, odd unicode,
// duplicate keys, broken JSON and wrong media types. Goal: no 5xx answer at all.
import { agent, lanes, PASSWORD, request } from './lib/http.mjs';
import { stop, tempDir } from './lib/procs.mjs';
import { createTenant, startServer } from './lib/services.mjs';
import { signedIn } from './redis-outage.mjs';

const COUNT = Number(process.env.FAULTS_FUZZ_COUNT) || 2000;
const SEED = 20_240_614;

function prng(seed) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WEIRD_STRINGS = [
  '',
  ' ',
  '\u0000',
  '\ud800',
  '\udfff\ud800',
  '\u202e',
  '\ufeff',
  '\uffff',
  '𝕒𝕕𝕒@𝕖𝕩𝕒𝕞𝕡𝕝𝕖.𝕔𝕠𝕞',
  'ada@example.com\u0000.evil',
  'ADA@EXAMPLE.COM',
  'a\u0301'.repeat(500),
  '😀'.repeat(300),
  'K@\u212a.example',
  '%00',
  '../../etc/passwd',
  "' or 1=1 --",
  '<script>',
  '{"$gt":""}',
  'x'.repeat(70_000),
  '9'.repeat(400),
];
const WEIRD_VALUES = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  -0,
  1e308,
  Number.MAX_SAFE_INTEGER + 2,
  [],
  [null],
  {},
  { $gt: '' },
  { __proto__: { admin: true } },
  ['ada@example.com'],
  { toString: 'x' },
];

/** A body that satisfies the schema's shape, so that mutations reach deeper checks. */
function plausible(schema, ids) {
  const out = {};
  for (const [name, prop] of Object.entries(schema?.properties ?? {})) {
    if (/email/i.test(name)) out[name] = `fuzz-${Math.floor(Math.random() * 1e9)}@example.com`;
    else if (/password/i.test(name)) out[name] = PASSWORD;
    else if (/refresh/i.test(name)) out[name] = ids.refreshToken;
    else if (name === 'token') out[name] = ids.accessToken;
    else if (prop.enum) out[name] = prop.enum[0];
    else if (prop.anyOf?.[0]?.enum) out[name] = prop.anyOf[0].enum[0];
    else if (prop.type === 'object') out[name] = { plan: 'gold' };
    else if (prop.type === 'boolean') out[name] = true;
    else if (prop.type === 'array') out[name] = ['member'];
    else out[name] = 'value';
  }
  return out;
}

/** A path segment; a lone surrogate becomes its (invalid) UTF-8 bytes, percent-encoded. */
function segment(text) {
  try {
    return encodeURIComponent(text) || 'x';
  } catch {
    return '%ED%A0%80';
  }
}

function deep(depth, open, close, inner = '1') {
  return open.repeat(depth) + inner + close.repeat(depth);
}

/** One case: { name, body (string or Buffer), headers }. */
function makeCase(random, endpoint, ids) {
  const pick = (list) => list[Math.floor(random() * list.length)];
  const base = plausible(endpoint.schema, ids);
  const fields = Object.keys(base);
  const field = fields.length ? pick(fields) : 'x';
  const json = (name, value) => ({ name, body: JSON.stringify(value) });
  const kinds = [
    () => json('wrong_type', { ...base, [field]: pick(WEIRD_VALUES) }),
    () => json('weird_string', { ...base, [field]: pick(WEIRD_STRINGS) }),
    () =>
      json('missing_field', Object.fromEntries(Object.entries(base).filter(([k]) => k !== field))),
    () =>
      json('unknown_field', {
        ...base,
        [pick(['__proto__', 'constructor', 'admin', 'tid'])]: { x: 1 },
      }),
    () => json('plausible', base),
    () => json('not_an_object', pick([null, [], 'text', 42, [base]])),
    () => ({
      name: 'duplicate_keys',
      body: `{${[...fields, field].map((k, i) => `"${k}":${i % 2 ? JSON.stringify(pick(WEIRD_VALUES)) : JSON.stringify(base[k] ?? 'v')}`).join(',')}}`,
    }),
    () => ({ name: 'deep_array', body: deep(Math.floor(random() * 30_000) + 1000, '[', ']') }),
    () => ({
      name: 'deep_object',
      body: JSON.stringify({ ...base, [field]: 0 }).replace('0', deep(5000, '{"a":', '}')),
    }),
    () => ({
      name: 'huge_body',
      body: JSON.stringify({ ...base, [field]: 'x'.repeat(pick([65_000, 1_100_000])) }),
    }),
    () => ({
      name: 'many_keys',
      body: JSON.stringify(
        Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, i])),
      ),
    }),
    () => ({
      name: 'broken_json',
      body: pick([
        '{',
        '{"a":',
        '}',
        '{"a":1,}',
        "{'a':1}",
        'nul',
        '\ufeff{}',
        '1e99999',
        '{"a":"\\ud800"}',
        '{"a":"\\u00"}',
      ]),
    }),
    () => ({
      name: 'invalid_utf8',
      body: Buffer.concat([
        Buffer.from(`{"${field}":"`),
        Buffer.from([0xff, 0xfe, 0xc0, 0x80, 0xed, 0xa0, 0x80]),
        Buffer.from('"}'),
      ]),
    }),
    () => ({ name: 'empty_body', body: '' }),
    () => ({
      ...json('media_type', base),
      headers: {
        'content-type': pick([
          'text/plain',
          'application/json; charset=utf-16',
          'multipart/form-data; boundary=x',
          'application/x-www-form-urlencoded',
          'application/jsonx',
          '',
        ]),
      },
    }),
    () => ({ ...json('gzip_claimed', base), headers: { 'content-encoding': 'gzip' } }),
  ];
  return pick(kinds)();
}

function endpointsOf(doc) {
  const out = [];
  for (const [path, ops] of Object.entries(doc.paths ?? {})) {
    for (const [method, op] of Object.entries(ops)) {
      const content = op.requestBody?.content?.['application/json'];
      if (!content) continue;
      const schemes = (op.security ?? []).flatMap((s) => Object.keys(s));
      out.push({ method: method.toUpperCase(), path, schema: content.schema, schemes });
    }
  }
  return out;
}

export async function f8() {
  const dir = tempDir('fuzz');
  // TRUST_PROXY: each case comes from an address of its own, so per-address limits do not
  // turn the run into a run of 429s that never reach the handlers.
  const env = { DATABASE_URL: `sqlite:${dir}/latchkey.db`, TRUST_PROXY: 'true' };
  const tenant = await createTenant(env);
  const server = await startServer(env);
  try {
    const doc = (await request(server.url, 'GET', '/v1/openapi.json')).json;
    const endpoints = endpointsOf(doc);
    const { client } = await import('./lib/http.mjs');
    const [session] = await signedIn(client(server.url, tenant.secretKey), 1, 'f8');
    const ids = { ...session, userId: session.user.id };
    const random = prng(SEED);
    const via = agent(16);
    const statuses = {};
    const fiveXx = [];
    await lanes(
      8,
      async (i) => {
        const endpoint = endpoints[i % endpoints.length];
        const c = makeCase(random, endpoint, ids);
        const path = endpoint.path.replace(/\{[^}]+\}/g, () =>
          random() < 0.7 ? ids.userId : segment(WEIRD_STRINGS[Math.floor(random() * 8)]),
        );
        const auth = endpoint.schemes.includes('publishableKey')
          ? { 'x-latchkey-publishable-key': tenant.publishableKey, origin: 'http://localhost:5173' }
          : { authorization: `Bearer ${tenant.secretKey}` };
        const body = c.body;
        const r = await request(server.url, endpoint.method, path, {
          via,
          body,
          timeoutMs: 15_000,
          headers: {
            'content-type': 'application/json',
            ...auth,
            'x-forwarded-for': `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
            'content-length': Buffer.byteLength(body),
            ...c.headers,
          },
        });
        const key = r.status || r.error;
        statuses[key] = (statuses[key] ?? 0) + 1;
        if (r.status >= 500 || r.status === 0)
          fiveXx.push(`${endpoint.method}_${endpoint.path}:${c.name}:${r.status || r.error}`);
      },
      { count: COUNT },
    );
    const alive = server.child.alive();
    const text = JSON.stringify(statuses).replaceAll('"', '');
    const samples = [...new Set(fiveXx)].slice(0, 4).join(',');
    const ok = fiveXx.length === 0 && alive;
    return {
      ok,
      line:
        `F8 fuzz_json_endpoints requests=${COUNT} endpoints=${endpoints.length} 5xx_or_no_answer=${fiveXx.length} (goal 0)` +
        ` server_alive=${alive ? 'yes' : 'no'} statuses=${text}${samples ? ` first=${samples}` : ''}`,
    };
  } finally {
    await stop(server.child);
  }
}
