// F7: credential stuffing against a background of legitimate users. The customer's server
// relays each sign-in with its secret key and the end user's address in Latchkey-Client-IP.
// The attacker's guesses are near misses of the real passwords (case, spaces, a letter
// less, an invisible one): none may succeed. Legitimate owners of the attacked accounts
// sign in during the attack from their own addresses: at least 99 % must succeed.
// Scaled by default (see COUNTS); FAULTS_FULL=1 runs the 10,000 / 1,000 / 50.
import { setTimeout as sleep } from 'node:timers/promises';
import { agent, client, lanes } from './lib/http.mjs';
import { stop, tempDir } from './lib/procs.mjs';
import { createTenant, startServer } from './lib/services.mjs';

/** Same ratios as the issue: 10 attempts per account, 200 per attacking address. */
const COUNTS = process.env.FAULTS_FULL
  ? { attempts: 10_000, accounts: 1000, addresses: 50, legitUsers: 100 }
  : { attempts: 1000, accounts: 100, addresses: 5, legitUsers: 20 };

const passwordOf = (i) => `lantern ${i} orchard violet`;
const NEAR_MISSES = [
  (p) => p.toUpperCase(),
  (p) => `${p} `,
  (p) => ` ${p}`,
  (p) => p.slice(0, -1),
  // Not a full-width letter: NFKC maps it to the same password, as NIST SP 800-63B asks.
  (p) => `${p}!`,
  (p) => `${p}1`,
  (p) => p.replace(' ', ''),
  (p) => `${p[0].toUpperCase()}${p.slice(1)}`,
  (p) => `${p}\u200b`, // ZERO WIDTH SPACE: NFKC keeps it
  () => 'password123',
];

/** A deterministic shuffle (mulberry32), so that every run attacks in the same order. */
function shuffled(list, seed) {
  let a = seed;
  const random = () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out = [...list];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

export async function f7() {
  const { attempts, accounts, addresses, legitUsers } = COUNTS;
  const dir = tempDir('stuffing');
  const env = { DATABASE_URL: `sqlite:${dir}/latchkey.db` };
  const tenant = await createTenant(env);
  const server = await startServer(env);
  try {
    const api = client(server.url, tenant.secretKey, agent());
    const emailOf = (i) => `owner-${i}@stuffing.example`;
    await lanes(
      4,
      async (i) => {
        const r = await api.post(
          '/v1/auth/sign-up',
          { email: emailOf(i), password: passwordOf(i) },
          { timeoutMs: 30_000 },
        );
        if (r.status !== 201) throw new Error(`seeding account ${i}: ${r.status} ${r.body}`);
      },
      { count: accounts },
    );

    // The attacker goes account by account (10 guesses each), rotating its addresses.
    const perAccount = attempts / accounts;
    const plan = [];
    for (const account of shuffled([...Array(accounts).keys()], 14)) {
      for (let k = 0; k < perAccount; k++)
        plan.push({ account, guess: NEAR_MISSES[k % NEAR_MISSES.length] });
    }
    const attacker = client(server.url, tenant.secretKey, agent());
    const attackStatuses = {};
    let attackerSuccesses = 0;
    let attackDone = false;
    const attack = lanes(
      8,
      async (i) => {
        const { account, guess } = plan[i];
        const r = await attacker.post(
          '/v1/auth/sign-in',
          { email: emailOf(account), password: guess(passwordOf(account)) },
          {
            headers: { 'latchkey-client-ip': `203.0.113.${1 + (i % addresses)}` },
            timeoutMs: 30_000,
          },
        );
        attackStatuses[r.status || r.error] = (attackStatuses[r.status || r.error] ?? 0) + 1;
        if (r.status === 200) attackerSuccesses++;
      },
      { count: plan.length },
    ).finally(() => {
      attackDone = true;
    });

    // The owners of a random subset of the attacked accounts, each from an address of its own.
    const owners = shuffled([...Array(accounts).keys()], 7).slice(0, legitUsers);
    const legit = client(server.url, tenant.secretKey, agent());
    const legitStatuses = {};
    let legitTried = 0;
    let legitOk = 0;
    const background = lanes(
      2,
      async (i) => {
        const owner = owners[i % owners.length];
        const r = await legit.post(
          '/v1/auth/sign-in',
          { email: emailOf(owner), password: passwordOf(owner) },
          {
            headers: {
              'latchkey-client-ip': `198.51.${100 + Math.floor(owner / 250)}.${owner % 250}`,
            },
            timeoutMs: 30_000,
          },
        );
        legitTried++;
        legitStatuses[r.status || r.error] = (legitStatuses[r.status || r.error] ?? 0) + 1;
        if (r.status === 200) legitOk++;
        await sleep(100);
      },
      { shouldStop: () => attackDone && legitTried >= owners.length },
    );
    await Promise.all([attack, background]);
    const rate = (100 * legitOk) / legitTried;
    const ok = attackerSuccesses === 0 && rate >= 99;
    const text = (o) => JSON.stringify(o).replaceAll('"', '');
    return {
      ok,
      line:
        `F7 credential_stuffing attempts=${plan.length} accounts=${accounts} addresses=${addresses}` +
        ` attacker_successes=${attackerSuccesses} (goal 0) legitimate_success=${rate.toFixed(1)}% (goal >= 99 %)` +
        ` legitimate=${text(legitStatuses)} attacker=${text(attackStatuses)}` +
        (process.env.FAULTS_FULL ? '' : ' (scaled 1/10 of the issue; FAULTS_FULL=1 for 10,000)'),
    };
  } finally {
    await stop(server.child);
  }
}
