import { readFileSync } from 'node:fs';
import {
  listProviderSettings,
  PROVIDER_MODES,
  type ProviderMode,
  setProvider,
} from '../modules/social/index.js';
import { parse, required, UsageError } from './args.js';
import type { OpenedDatabase } from './opened.js';
import { json, type Output } from './output.js';

const FLAGS = {
  tenant: { type: 'string' },
  'client-id': { type: 'string' },
  'client-secret': { type: 'string' },
  'client-secret-file': { type: 'string' },
  mode: { type: 'string' },
  enable: { type: 'boolean' },
  disable: { type: 'boolean' },
  'team-id': { type: 'string' },
  'key-id': { type: 'string' },
  'private-key-file': { type: 'string' },
  audience: { type: 'string' },
  json: { type: 'boolean' },
} as const;

const MODE_TEXT: Record<ProviderMode, string> = {
  off: 'disabled',
  development: 'enabled in development mode (no credentials, no request to the provider)',
  live: 'enabled',
};

export async function providerCommand(database: OpenedDatabase, args: string[], output: Output) {
  const [sub, ...rest] = args;
  const { values, positionals } = parse(rest, FLAGS);
  const tenantId = required(values.tenant, '--tenant');
  switch (sub) {
    case 'set': {
      const provider = required(positionals[0], 'PROVIDER');
      if ([values.enable, values.disable, values.mode].filter((v) => v !== undefined).length > 1)
        throw new UsageError('--mode, --enable and --disable exclude each other');
      const mode = values.mode;
      if (mode !== undefined && !PROVIDER_MODES.includes(mode as ProviderMode))
        throw new UsageError(`--mode is one of ${PROVIDER_MODES.join(', ')}`);
      const read = (file: string | undefined) =>
        file === undefined ? undefined : readFileSync(file, 'utf8').trim();
      const view = await setProvider(database.db, database.box, tenantId, provider, {
        clientId: values['client-id'],
        clientSecret: values['client-secret'] ?? read(values['client-secret-file']),
        mode: mode as ProviderMode | undefined,
        enabled: values.enable ? true : values.disable ? false : undefined,
        teamId: values['team-id'],
        keyId: values['key-id'],
        privateKeyPem: read(values['private-key-file']),
        audience: values.audience,
      });
      if (values.json) return json(output, view);
      output.out(`${view.name}: ${MODE_TEXT[view.mode]}, client id ${view.clientId || '(none)'}`);
      return;
    }
    case 'list': {
      const list = await listProviderSettings(database.db, tenantId);
      if (values.json) return json(output, list);
      for (const p of list)
        output.out(`${p.provider.padEnd(10)} ${p.mode.padEnd(11)} ${p.clientId}`);
      return;
    }
    default:
      throw new UsageError('usage: latchkey provider set|list --tenant ID PROVIDER …');
  }
}
