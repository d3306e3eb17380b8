// `npm run bench`: every benchmark in turn (after the build), each printing as it goes, then
// the verdict line of every goal together. Exit status 1 when a goal is not met or a
// benchmark failed. See bench/README.md for what each one measures.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const BENCHES = [
  'run.mjs', // sign-up against raw argon2id hashes
  'signin.mjs', // REST and hosted-page password sign-in against raw argon2id verifies
  'refresh.mjs', // REST refresh against raw RS256 signatures
  'introspect.mjs', // warm and cold introspection, p99 at half load
  'pages.mjs', // the hosted page and the script
  'import.mjs', // moving users in
  'webhooks.mjs', // the outbox's cost and the delivery lag
  'tracing.mjs', // tracing off costs nothing
  'tenants.mjs', // ten thousand tenants
];
/** A line that judges a goal: it ends with its verdict. */
const VERDICT = /\b(PASS|FAIL|MET|NOT MET|INCONCLUSIVE|FALLS SHORT)\b/;

const verdicts = [];
let failed = false;
for (const bench of process.argv.length > 2 ? process.argv.slice(2) : BENCHES) {
  console.log(`\n=== bench/${bench}`);
  const child = spawn(process.execPath, [join(HERE, bench)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let rest = '';
  child.stdout.on('data', (chunk) => {
    process.stdout.write(chunk);
    const lines = (rest + chunk).split('\n');
    rest = lines.pop() ?? '';
    for (const line of lines) if (VERDICT.test(line) && !line.startsWith('#')) verdicts.push(line);
  });
  const code = await new Promise((resolve) => child.once('exit', resolve));
  if (rest && VERDICT.test(rest)) verdicts.push(rest);
  if (code !== 0) {
    failed = true;
    verdicts.push(`bench/${bench} exited with status ${code}`);
  }
}
console.log('\n=== verdicts, one line per goal');
for (const line of verdicts) console.log(line);
if (failed || verdicts.some((line) => /\b(FAIL|NOT MET)\b/.test(line))) process.exitCode = 1;
