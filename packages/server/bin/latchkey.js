#!/usr/bin/env -S node --max-semi-space-size=4
// A young generation of 4 MB (V8's default is 16) keeps an idle server smaller; the extra
// scavenges cost little next to argon2 and RSA work. dist/latchkey.mjs is the whole
// server in one file (build.mjs says why).
import { existsSync } from 'node:fs';

const main = new URL('../dist/latchkey.mjs', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write('latchkey is not built yet: run `npm run build` in the repository root.\n');
  process.exit(1);
}
await import(main.href);
