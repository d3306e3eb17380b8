import type { Kysely } from 'kysely';
import { LatchkeyError, validationFailed } from '../../errors/index.js';
import { isUuid } from '../../storage/ids.js';
import { type Publisher, type Schema, transact } from '../../storage/index.js';
import { recordAudit } from '../audit/index.js';
import type { Tenant } from '../tenants/index.js';
import { getUser } from '../users/index.js';
import type { MfaDeps } from './deps.js';
import { deleteFactor, type Factor, listFactors } from './factors.js';
import { replaceRecoveryCodes } from './recovery-codes.js';
import { claimTotpStep, matchTotp, startTotp, type TotpEnrolment } from './totp.js';

/**
 * A user's factors changed on their behalf: by a team's own UI over REST (docs/design.md
 * §13, scope `users:write`) or by an operator. Each change goes to the audit log; `actor`
 * names an admin, when one made it.
 */

interface Who {
  tenant: Tenant;
  userId: string;
  /** Where the change came from, for the audit log (`api`, `account`, `admin`). */
  via: string;
  actor?: string | undefined;
}

/** Starts an authenticator app: live once `confirmTotp` gets a first code. */
export async function enrolTotp(
  deps: Pick<MfaDeps, 'db' | 'box'>,
  who: Who,
): Promise<TotpEnrolment> {
  const user = await getUser(deps.db, who.tenant.id, who.userId);
  return startTotp(deps, who.tenant, user);
}

/** Confirms an app with a first code; the code is used up (it cannot sign in afterwards). */
export async function confirmTotp(
  deps: Pick<MfaDeps, 'db' | 'box' | 'bus'>,
  who: Who,
  factorId: string,
  code: string,
): Promise<Factor> {
  const { tenant, userId } = who;
  await getUser(deps.db, tenant.id, userId);
  const factor = (await listFactors(deps.db, tenant.id, userId)).find(
    (f) => f.id === factorId && f.type === 'totp' && isUuid(factorId),
  );
  if (!factor) throw new LatchkeyError('not_found', 'This user has no such factor');
  if (factor.confirmed) throw new LatchkeyError('conflict', 'This factor is confirmed already');
  const match = await matchTotp(deps, tenant.id, userId, code, factorId);
  const claimed =
    match &&
    (await transact(deps.db, deps.bus, async (tx) => {
      if (!(await claimTotpStep(tx.db, match))) return false;
      await recordAudit(tx.db, {
        tenantId: tenant.id,
        userId,
        actor: who.actor,
        kind: 'factor_added',
        detail: { type: 'totp', factorId, via: who.via },
      });
      return true;
    }));
  if (!claimed)
    throw validationFailed([
      {
        path: '/code',
        code: 'code_invalid',
        message: 'The code is wrong: enter the 6 digits the app shows now',
      },
    ]);
  const live = (await listFactors(deps.db, tenant.id, userId)).find((f) => f.id === factorId);
  return live as Factor;
}

/** Ten new recovery codes, shown once; the old ones stop working. */
export async function newRecoveryCodes(
  deps: { db: Kysely<Schema>; bus: Publisher },
  who: Who,
): Promise<string[]> {
  await getUser(deps.db, who.tenant.id, who.userId);
  return transact(deps.db, deps.bus, async (tx) => {
    const codes = await replaceRecoveryCodes(tx.db, who.tenant.id, who.userId);
    await recordAudit(tx.db, {
      tenantId: who.tenant.id,
      userId: who.userId,
      actor: who.actor,
      kind: 'recovery_codes_replaced',
      detail: { via: who.via },
    });
    return codes;
  });
}

/** An operator removes a factor (a lost device), the last one too. */
export async function resetFactor(
  deps: { db: Kysely<Schema>; bus: Publisher },
  who: Who,
  factorId: string,
): Promise<Factor> {
  await getUser(deps.db, who.tenant.id, who.userId);
  return transact(deps.db, deps.bus, async (tx) => {
    const factor = await deleteFactor(tx.db, who.tenant, who.userId, factorId, { reset: true });
    await recordAudit(tx.db, {
      tenantId: who.tenant.id,
      userId: who.userId,
      actor: who.actor,
      kind: 'factor_reset',
      detail: { type: factor.type, factorId: factor.id, via: who.via },
    });
    return factor;
  });
}
