/**
 * "Test sign-in" before a provider is enabled, over real HTTP on every database, against
 * the local GitHub-shaped provider: an admin tests saved credentials of a disabled
 * provider (the flow marked as that admin's, nothing created), while users' sign-in with
 * it stays refused, at the start and at the callback.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdminClient, signedInAdmin } from './admin-support.js';
import { type ProviderServer, startProvider } from './providers.js';
import {
  DIALECTS,
  email,
  json,
  reservePort,
  startApp,
  type TestApp,
  type TestTenant,
} from './support.js';

const ORIGIN = 'http://localhost:5173';

for (const dialect of DIALECTS) {
  describe(`admin Test sign-in of a disabled provider (${dialect})`, () => {
    let app: TestApp;
    let github: ProviderServer;
    let t: TestTenant;
    let root: AdminClient;
    const social = () => `/admin/tenants/${t.tenant.id}/social`;
    const hostedQuery = () =>
      new URLSearchParams({ pk: t.publishableKey, redirect_url: `${ORIGIN}/callback` }).toString();

    beforeAll(async () => {
      const socket = reservePort();
      const base = `http://127.0.0.1:${socket.address().port}`;
      github = await startProvider('github', { redirectUri: `${base}/oauth/github/callback` });
      app = await startApp(dialect, {
        socket,
        env: {
          LATCHKEY_PROVIDER_ENDPOINTS: JSON.stringify({ github: github.endpoints }),
        },
      });
      t = await app.tenant({ allowedOrigins: [ORIGIN] });
      root = await signedInAdmin(app, email('root'), { superuser: true });
      await root.get(social());
      const saved = await root.post(`${social()}/github`, {
        clientId: github.clientId,
        clientSecret: github.clientSecret,
      });
      expect(saved.status).toBe(303);
    }, 60_000);
    afterAll(async () => {
      await app?.dispose();
      await github?.close();
    });

    const users = () =>
      app.ctx.database.db
        .selectFrom('users')
        .select('id')
        .where('tenant_id', '=', t.tenant.id)
        .execute();

    it('offers Test sign-in for saved credentials that are not enabled, and says users cannot sign in yet', async () => {
      const page = await root.get(social());
      const panel = page.html.slice(page.html.indexOf('id="h-github"'));
      expect(panel).toContain(`action="${social()}/github/test"`);
      expect(panel).toContain('Users cannot sign in with GitHub until it is Live.');
      // The test posts here and is sent on to the provider: the page's form-action allows it.
      const formAction = /form-action ([^;]+)/.exec(
        page.res.headers.get('content-security-policy') ?? '',
      )?.[1];
      expect(formAction).toContain(
        new URL(github.endpoints.authorizationEndpoint as string).origin,
      );
      // A provider with nothing saved has no button.
      const google = page.html.slice(
        page.html.indexOf('id="h-google"'),
        page.html.indexOf('id="h-apple"'),
      );
      expect(google).not.toContain('/google/test');
      expect(google).toContain('Test sign-in works once the credentials are saved, Live or not.');
      const refused = await root.post(`${social()}/google/test`, {});
      expect(refused.status).toBe(400);
      expect(refused.html).toContain('Save the Google credentials before testing them.');
    });

    it("runs the real flow with the disabled provider's credentials, marked as the admin's test, creating nothing", async () => {
      const person = { sub: '4242', email: email('octo'), emailVerified: true, name: 'Octo' };
      github.next(person);
      await root.get(social());
      const start = await root.post(`${social()}/github/test`, {});
      expect(start.status).toBe(303);
      const state = new URL(start.location as string).searchParams.get('state') as string;
      const flow = await app.ctx.database.db
        .selectFrom('oauth_flows')
        .select(['admin_id'])
        .where('state', '=', state)
        .executeTakeFirstOrThrow();
      expect(flow.admin_id).not.toBeNull();
      // The provider signs the person in and sends the browser back to our callback.
      const answer = await fetch(start.location as string, { redirect: 'manual' });
      const callback = new URL(answer.headers.get('location') as string);
      const finished = await root.get(`${callback.pathname}${callback.search}`);
      expect(finished.status).toBe(200);
      const next = /id="next" href="([^"]+)"/.exec(finished.html)?.[1] as string;
      const result = await root.get(next);
      expect(result.status).toBe(200);
      expect(result.html).toContain('GitHub signed you in. Nothing was created or changed.');
      expect(result.html).toContain(person.email);
      // The picture GitHub gave (avatar_url), as text.
      expect(result.html).toContain(
        '<dt>Picture</dt><dd><code>https://avatars.githubusercontent.com/u/4242?v=4</code></dd>',
      );
      expect(result.html).toContain('Would create a new account');
      expect(await users()).toEqual([]);
    });

    it('still refuses users: no button on the hosted page, and a start answers "turned off"', async () => {
      const config = await json(await app.request(`/public/config?pk=${t.publishableKey}`));
      expect(config.providers).toEqual([]);
      const hosted = await (await app.request(`/sign-in?${hostedQuery()}`)).text();
      expect(hosted).not.toContain('Continue with GitHub');
      const start = await app.request(
        `/oauth/github/start?q=${encodeURIComponent(hostedQuery())}`,
        {
          redirect: 'manual',
        },
      );
      expect(start.status).toBe(400);
      expect(await start.text()).toContain(
        'Sign-in with GitHub is turned off for this application.',
      );
      expect(await users()).toEqual([]);
    });

    it("refuses a user's flow whose answer arrives after the provider was disabled", async () => {
      await root.get(social());
      const path = `${social()}/github`;
      expect((await root.post(path, { enabled: 'on', clientId: github.clientId })).status).toBe(
        303,
      );
      github.next({ sub: '5151', email: email('late'), emailVerified: true });
      const start = await app.request(
        `/oauth/github/start?q=${encodeURIComponent(hostedQuery())}`,
        {
          redirect: 'manual',
        },
      );
      expect(start.status).toBe(303);
      const cookie = (start.headers.getSetCookie()[0] as string).split(';')[0] as string;
      await root.get(social());
      expect((await root.post(path, { clientId: github.clientId })).status).toBe(303);
      const answer = await fetch(start.headers.get('location') as string, { redirect: 'manual' });
      const callback = await fetch(answer.headers.get('location') as string, {
        redirect: 'manual',
        headers: { cookie },
      });
      expect(callback.status).toBe(400);
      expect(await callback.text()).toContain(
        'Sign-in with GitHub is turned off for this application.',
      );
      expect(await users()).toEqual([]);
    });
  });
}
