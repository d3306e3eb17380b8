import type { Config } from '../config/config.js';
import {
  createAdmin,
  deleteAdmin,
  listAdmins,
  resetAdminPassword,
} from '../modules/admin/index.js';
import { createPasswordHasher } from '../modules/users/index.js';
import type { Database } from '../storage/index.js';
import { parse, required, UsageError } from './args.js';
import { json, type Output } from './output.js';

const ADMIN_FLAGS = {
  email: { type: 'string' },
  password: { type: 'string' },
  superuser: { type: 'boolean' },
  tenant: { type: 'string', multiple: true },
  json: { type: 'boolean' },
} as const;

const USAGE =
  'usage: latchkey admin create --email E [--password P] [--superuser | --tenant ID…] | list | delete --email E | reset-password --email E [--password P]';

/** Admin accounts of the admin area (docs/design.md §12.1). */
export async function adminCommand(
  config: Config,
  database: Database,
  args: string[],
  output: Output,
): Promise<void> {
  const [sub, ...rest] = args;
  const { values } = parse(rest, ADMIN_FLAGS);
  const deps = { db: database.db, hasher: createPasswordHasher(config.argon2) };
  const adminUrl = `${config.publicUrl}/admin`;
  switch (sub) {
    case 'create': {
      const tenants = values.tenant ?? [];
      if (values.superuser && tenants.length)
        throw new UsageError('--superuser and --tenant exclude each other');
      if (!values.superuser && !tenants.length)
        throw new UsageError("name the admin's tenants with --tenant ID, or give --superuser");
      const { admin, generatedPassword } = await createAdmin(deps, {
        email: required(values.email, '--email'),
        password: values.password,
        superuser: values.superuser ?? false,
        tenantIds: tenants,
      });
      if (values.json) return json(output, { admin, password: generatedPassword });
      output.out(
        `admin     ${admin.email}  (${admin.superuser ? 'superuser' : `tenants: ${admin.tenantIds.join(', ')}`})`,
      );
      if (generatedPassword) output.out(`password  ${generatedPassword}   (shown only now)`);
      output.out(`sign in   ${adminUrl}`);
      return;
    }
    case 'list': {
      const admins = await listAdmins(database.db);
      if (values.json) return json(output, admins);
      for (const a of admins)
        output.out(
          `${a.email}  ${a.superuser ? 'superuser' : `tenants: ${a.tenantIds.join(' ')}`}`,
        );
      return;
    }
    case 'delete':
      await deleteAdmin(database.db, required(values.email, '--email'));
      output.out(`deleted ${values.email}`);
      return;
    case 'reset-password': {
      const email = required(values.email, '--email');
      const { generatedPassword } = await resetAdminPassword(deps, email, values.password);
      if (values.json) return json(output, { password: generatedPassword });
      output.out(`the password of ${email} is changed; their sessions ended`);
      if (generatedPassword) output.out(`password  ${generatedPassword}   (shown only now)`);
      return;
    }
    default:
      throw new UsageError(USAGE);
  }
}
