import { createHash } from 'node:crypto';
/**
 * node-oidc-provider's storage (docs/design.md §14, modules/oauth/adapter.ts) on every
 * database: what it writes it finds again, per tenant and model; expiry, single-use codes
 * (also when two requests race), the refresh-token grace period, revocation by grant.
 */
import { errors } from 'oidc-provider';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ArtifactAdapter } from '../src/modules/oauth/adapter.js';
import { createTenant } from '../src/modules/tenants/index.js';
import { type Database, migrateToLatest, openDatabase } from '../src/storage/index.js';
import { DIALECTS, freshDatabaseUrl } from './support.js';

describe.each(DIALECTS)('oauth adapter on %s', (dialect) => {
  let fresh: { url: string; drop(): Promise<void> };
  let database: Database;
  let tenant: string;
  let other: string;
  const adapter = (model: string, tenantId = tenant, reuseMs?: number) =>
    new ArtifactAdapter(
      { db: database.db, bus: { publish: async () => {} } },
      tenantId,
      model,
      reuseMs === undefined ? {} : { refreshReuseIntervalMs: reuseMs },
    );
  /** Moves a row's times into the past, as if `ms` had gone by. */
  const age = async (model: string, presented: string, ms: number) => {
    // Codes and refresh tokens are kept by their SHA-256 (docs/design.md §14).
    const id = ['AuthorizationCode', 'RefreshToken'].includes(model)
      ? createHash('sha256').update(presented).digest('hex')
      : presented;
    const row = await database.db
      .selectFrom('oauth_artifacts')
      .select(['expires_at', 'consumed_at'])
      .where('tenant_id', '=', tenant)
      .where('model', '=', model)
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    await database.db
      .updateTable('oauth_artifacts')
      .set({
        expires_at: row.expires_at === null ? null : row.expires_at - ms,
        consumed_at: row.consumed_at === null ? null : row.consumed_at - ms,
      })
      .where('tenant_id', '=', tenant)
      .where('model', '=', model)
      .where('id', '=', id)
      .execute();
  };

  beforeAll(async () => {
    fresh = await freshDatabaseUrl(dialect);
    database = openDatabase(fresh.url, { poolSize: 4 });
    await migrateToLatest(database.db as never);
    tenant = (await createTenant(database.db, { name: 'Acme' })).id;
    other = (await createTenant(database.db, { name: 'Other' })).id;
  });
  afterAll(async () => {
    await database?.close();
    await fresh?.drop();
  });

  it('finds what it stored, per tenant and model, and upsert replaces the payload', async () => {
    const grants = adapter('Grant');
    await grants.upsert('g-1', { accountId: 'u-1', clientId: 'app_x', kind: 'Grant' }, 600);
    expect(await grants.find('g-1')).toEqual({
      accountId: 'u-1',
      clientId: 'app_x',
      kind: 'Grant',
    });
    expect(await adapter('Grant', other).find('g-1')).toBeUndefined();
    expect(await adapter('Session').find('g-1')).toBeUndefined();

    await grants.upsert('g-1', { accountId: 'u-1', clientId: 'app_x', scope: 'openid' }, 600);
    expect(await grants.find('g-1')).toEqual({
      accountId: 'u-1',
      clientId: 'app_x',
      scope: 'openid',
    });
    const rows = await database.db
      .selectFrom('oauth_artifacts')
      .select(['client_id', 'expires_at'])
      .where('id', '=', 'g-1')
      .execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]?.client_id).toBe('app_x');
    expect(Number(rows[0]?.expires_at) - Date.now()).toBeGreaterThan(590_000);

    await grants.destroy('g-1');
    expect(await grants.find('g-1')).toBeUndefined();
  });

  it('an expired row is not found', async () => {
    const interactions = adapter('Interaction');
    await interactions.upsert('i-1', { kind: 'Interaction' }, 60);
    await age('Interaction', 'i-1', 61_000);
    expect(await interactions.find('i-1')).toBeUndefined();
  });

  it('findByUid finds a live session by its uid, on its tenant only', async () => {
    const sessions = adapter('Session');
    await sessions.upsert('s-1', { uid: 'uid-1', accountId: 'u-1', kind: 'Session' }, 600);
    expect(await sessions.findByUid('uid-1')).toMatchObject({ accountId: 'u-1' });
    expect(await adapter('Session', other).findByUid('uid-1')).toBeUndefined();
    expect(await sessions.findByUid('uid-2')).toBeUndefined();
    expect(await sessions.findByUserCode()).toBeUndefined();
  });

  it('a code is consumed once: a second consume, even a concurrent one, is invalid_grant', async () => {
    const codes = adapter('AuthorizationCode');
    await codes.upsert('c-1', { grantId: 'g-2', kind: 'AuthorizationCode' }, 60);
    const before = Math.floor(Date.now() / 1000);
    await codes.consume('c-1');
    expect((await codes.find('c-1'))?.consumed).toBeGreaterThanOrEqual(before);
    await expect(codes.consume('c-1')).rejects.toBeInstanceOf(errors.InvalidGrant);

    await codes.upsert('c-2', { grantId: 'g-2', kind: 'AuthorizationCode' }, 60);
    const raced = await Promise.allSettled([codes.consume('c-2'), codes.consume('c-2')]);
    expect(raced.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
  });

  it('a refresh token used within the grace period is served as unused, later as consumed', async () => {
    const tokens = adapter('RefreshToken', tenant, 5_000);
    await tokens.upsert('r-1', { grantId: 'g-3', kind: 'RefreshToken' }, 3_600);
    await tokens.consume('r-1');
    expect(await tokens.find('r-1')).not.toHaveProperty('consumed');
    // Consumed again by a second tab: no error, the first use counts.
    await tokens.consume('r-1');
    await age('RefreshToken', 'r-1', 6_000);
    expect((await tokens.find('r-1'))?.consumed).toEqual(expect.any(Number));
  });

  it('revokeByGrantId deletes the rows of that grant and model only', async () => {
    const tokens = adapter('RefreshToken');
    const codes = adapter('AuthorizationCode');
    await tokens.upsert('r-2', { grantId: 'g-4' }, 600);
    await tokens.upsert('r-3', { grantId: 'g-5' }, 600);
    await codes.upsert('c-3', { grantId: 'g-4' }, 60);
    await adapter('RefreshToken', other).upsert('r-2', { grantId: 'g-4' }, 600);
    await tokens.revokeByGrantId('g-4');
    expect(await tokens.find('r-2')).toBeUndefined();
    expect(await tokens.find('r-3')).toBeDefined();
    expect(await codes.find('c-3')).toBeDefined();
    expect(await adapter('RefreshToken', other).find('r-2')).toBeDefined();
  });
});
