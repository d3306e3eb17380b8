import type { Writable } from 'node:stream';
import type { ApiKey } from '../modules/keys/index.js';
import { audienceOf } from '../modules/sessions/index.js';
import type { Tenant } from '../modules/tenants/index.js';

export interface Output {
  out(line: string): void;
  err(line: string): void;
  /** Standard output as a stream, for output too big to hold (export); else `out` is used. */
  stdout?: Writable;
}

export function json(output: Output, value: unknown): void {
  output.out(JSON.stringify(value, null, 2));
}

export function describeTenant(output: Output, t: Tenant, authUrl: string): void {
  output.out(`tenant       ${t.id}`);
  output.out(`name         ${t.name}`);
  output.out(`environment  ${t.environment}`);
  output.out(`plan         ${t.plan} (${t.limits.rps} req/s, ${t.limits.rpm} req/min)`);
  output.out(`origins      ${t.allowedOrigins.join(' ') || '(none)'}`);
  output.out(`verification ${t.requireEmailVerification ? 'required' : 'not required'}`);
  output.out(`token ttl    ${t.accessTokenTtl} s`);
  output.out(`mfa          ${t.mfaPolicy}`);
  output.out(`passkeys     ${t.passkeysEnabled ? 'on' : 'off'}`);
  output.out(`registration ${t.dynamicRegistration ? 'on (RFC 7591)' : 'off'}`);
  output.out(`audience     ${audienceOf(authUrl, t)}${t.audience ? '' : ' (default)'}`);
}

export function describeKey(output: Output, k: ApiKey): void {
  const state = k.revokedAt ? `revoked ${k.revokedAt}` : 'live';
  const shown = k.publishableKey ?? k.display;
  output.out(`${k.id}  ${k.kind.padEnd(11)}  ${shown}  ${k.scopes.join(' ') || '-'}  ${state}`);
}
