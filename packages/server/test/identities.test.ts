/**
 * Linking and unlinking provider identities: the social module's two workflows, on every
 * database. The admin area and the browser library call these same functions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LatchkeyError } from '../src/errors/index.js';
import {
  type LinkDeps,
  linkIdentity,
  listIdentities,
  type Profile,
  unlinkIdentity,
} from '../src/modules/social/index.js';
import { createUserWithoutPassword } from '../src/modules/users/index.js';
import {
  DIALECTS,
  email,
  json,
  postJson,
  startApp,
  type TestApp,
  type TestTenant,
} from './support.js';

let subjects = 0;
const profile = (issuer: string): Profile => {
  subjects += 1;
  return {
    issuer,
    subject: `subject-${subjects}`,
    email: null,
    emailVerified: false,
    name: null,
    picture: null,
  };
};

async function refusal(promise: Promise<unknown>): Promise<LatchkeyError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(LatchkeyError);
  return error as LatchkeyError;
}

describe.each(DIALECTS)('linking and unlinking identities on %s', (dialect) => {
  let app: TestApp;
  let t: TestTenant;
  let deps: LinkDeps;

  beforeAll(async () => {
    app = await startApp(dialect);
    t = await app.tenant();
    deps = { db: app.ctx.database.db, bus: app.ctx.bus };
  });
  afterAll(() => app.dispose());

  const socialUser = () =>
    createUserWithoutPassword(deps.db, t.tenant, {
      email: email(),
      name: null,
      emailVerified: true,
    });

  const identityRows = (userId: string) =>
    deps.db
      .selectFrom('identities')
      .select(['id', 'provider'])
      .where('user_id', '=', userId)
      .execute();

  const auditKinds = async (userId: string) =>
    (
      await deps.db
        .selectFrom('audit_events')
        .select('kind')
        .where('user_id', '=', userId)
        .orderBy('created_at')
        .execute()
    ).map((r) => r.kind);

  it('links identities, records each link, and tells caches that the user changed', async () => {
    const user = await socialUser();
    const topics: string[] = [];
    deps.bus.onInvalidate((topic) => topics.push(topic));
    const google = await linkIdentity(deps, t.tenant.id, user.id, 'google', profile('g'));
    const github = await linkIdentity(deps, t.tenant.id, user.id, 'github', profile('h'));
    expect(google).toMatchObject({ userId: user.id, provider: 'google' });
    expect((await identityRows(user.id)).map((r) => r.id).sort()).toEqual(
      [google.id, github.id].sort(),
    );
    expect(await auditKinds(user.id)).toEqual(['identity_linked', 'identity_linked']);
    expect(topics.filter((topic) => topic === `user:${user.id}`)).toHaveLength(2);
  });

  it("keeps a linked identity's picture, which the admin area lists", async () => {
    const user = await socialUser();
    const picture = 'https://avatars.githubusercontent.com/u/7?v=4';
    const linked = await linkIdentity(deps, t.tenant.id, user.id, 'github', {
      ...profile('h'),
      picture,
    });
    expect(linked.picture).toBe(picture);
    await linkIdentity(deps, t.tenant.id, user.id, 'apple', profile('a'));
    const listed = await listIdentities(deps.db, t.tenant.id, user.id);
    expect(Object.fromEntries(listed.map((i) => [i.provider, i.picture]))).toEqual({
      github: picture,
      apple: null,
    });
  });

  it('refuses an identity that belongs to a user already, and an unknown user', async () => {
    const first = await socialUser();
    const second = await socialUser();
    const taken = profile('g');
    await linkIdentity(deps, t.tenant.id, first.id, 'google', taken);
    const error = await refusal(linkIdentity(deps, t.tenant.id, second.id, 'google', taken));
    expect(error.code).toBe('conflict');
    expect(error.message).toMatch(/Google account is linked already/);
    const unknown = await refusal(
      linkIdentity(deps, t.tenant.id, crypto.randomUUID(), 'google', profile('g')),
    );
    expect(unknown.code).toBe('not_found');
    expect(await identityRows(second.id)).toEqual([]);
  });

  it("unlinks an identity, but never a user's last way to sign in", async () => {
    const user = await socialUser();
    const google = await linkIdentity(deps, t.tenant.id, user.id, 'google', profile('g'));
    const github = await linkIdentity(deps, t.tenant.id, user.id, 'github', profile('h'));
    await unlinkIdentity(deps, t.tenant.id, user.id, google.id);
    expect((await identityRows(user.id)).map((r) => r.id)).toEqual([github.id]);
    const last = await refusal(unlinkIdentity(deps, t.tenant.id, user.id, github.id));
    expect(last.code).toBe('conflict');
    expect(last.status).toBe(409);
    expect(last.message).toMatch(/only way this user can sign in/);
    expect((await identityRows(user.id)).map((r) => r.id)).toEqual([github.id]);
    expect(await auditKinds(user.id)).toEqual([
      'identity_linked',
      'identity_linked',
      'identity_unlinked',
    ]);
  });

  it('unlinks the last identity of a user who has a password', async () => {
    const res = await postJson(app, '/v1/auth/sign-up', t.secretKey, {
      email: email(),
      password: 'correct horse battery',
    });
    const { userId } = await json(res);
    const apple = await linkIdentity(deps, t.tenant.id, userId, 'apple', profile('a'));
    await unlinkIdentity(deps, t.tenant.id, userId, apple.id);
    expect(await identityRows(userId)).toEqual([]);
  });

  it("answers not_found for another user's identity or an unknown one", async () => {
    const owner = await socialUser();
    const other = await socialUser();
    const kept = await linkIdentity(deps, t.tenant.id, owner.id, 'google', profile('g'));
    await linkIdentity(deps, t.tenant.id, other.id, 'google', profile('g'));
    await linkIdentity(deps, t.tenant.id, other.id, 'github', profile('h'));
    expect((await refusal(unlinkIdentity(deps, t.tenant.id, other.id, kept.id))).code).toBe(
      'not_found',
    );
    expect(
      (await refusal(unlinkIdentity(deps, t.tenant.id, other.id, crypto.randomUUID()))).code,
    ).toBe('not_found');
    expect(await identityRows(owner.id)).toHaveLength(1);
  });

  it('two unlinks at once of the last two identities leave one of them', async () => {
    const user = await socialUser();
    const a = await linkIdentity(deps, t.tenant.id, user.id, 'google', profile('g'));
    const b = await linkIdentity(deps, t.tenant.id, user.id, 'github', profile('h'));
    const results = await Promise.allSettled([
      unlinkIdentity(deps, t.tenant.id, user.id, a.id),
      unlinkIdentity(deps, t.tenant.id, user.id, b.id),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect(await identityRows(user.id)).toHaveLength(1);
  });
});
