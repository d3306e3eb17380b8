/** An admin-area client over real HTTP: a cookie jar, and the CSRF token of the last page. */
import { createAdmin } from '../src/modules/admin/index.js';
import type { TestApp } from './support.js';

export const ADMIN_PASSWORD = 'admin password 12345';

export class AdminClient {
  readonly #app: TestApp;
  readonly #jar = new Map<string, string>();
  csrf = '';

  constructor(app: TestApp) {
    this.#app = app;
  }

  #cookie(): string {
    return [...this.#jar].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  #keep(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = (pair as string).indexOf('=');
      const name = (pair as string).slice(0, at);
      const value = (pair as string).slice(at + 1);
      if (value === '' || /Max-Age=0|Expires=Thu, 01 Jan 1970/i.test(line)) this.#jar.delete(name);
      else this.#jar.set(name, value);
    }
  }

  /** GET a page; remembers the CSRF token it carries. */
  async get(path: string): Promise<{ status: number; html: string; res: Response }> {
    const res = await this.#app.request(path, {
      headers: { cookie: this.#cookie() },
      redirect: 'manual',
    });
    this.#keep(res);
    const html = await res.text();
    const token = /name="_csrf" value="([^"]+)"/.exec(html)?.[1];
    if (token) this.csrf = token;
    return { status: res.status, html, res };
  }

  /** POST a form from our own origin with the last CSRF token (unless given in `fields`). */
  async post(
    path: string,
    fields: Record<string, string>,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; html: string; location: string | null; res: Response }> {
    const res = await this.#app.request(path, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        origin: this.#app.url,
        cookie: this.#cookie(),
        ...headers,
      },
      body: new URLSearchParams({ _csrf: this.csrf, ...fields }).toString(),
    });
    this.#keep(res);
    const html = await res.text();
    const token = /name="_csrf" value="([^"]+)"/.exec(html)?.[1];
    if (token) this.csrf = token;
    return { status: res.status, html, location: res.headers.get('location'), res };
  }

  async signIn(email: string, password = ADMIN_PASSWORD) {
    await this.get('/admin/sign-in');
    return this.post('/admin/sign-in', { email, password, next: '/admin/tenants' });
  }
}

/** An admin account made directly with the service, and a client signed in as it. */
export async function signedInAdmin(
  app: TestApp,
  email: string,
  scope: { superuser: true } | { tenantIds: string[] },
): Promise<AdminClient> {
  await createAdmin(
    { db: app.ctx.database.db, hasher: app.ctx.hasher },
    {
      email,
      password: ADMIN_PASSWORD,
      superuser: 'superuser' in scope,
      tenantIds: 'tenantIds' in scope ? scope.tenantIds : [],
    },
  );
  const client = new AdminClient(app);
  const res = await client.signIn(email);
  if (res.status !== 303) throw new Error(`admin sign-in answered ${res.status}`);
  return client;
}
