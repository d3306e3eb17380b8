/**
 * A browser over fetch for the OpenID Provider suites (docs/design.md §14): it keeps the
 * cookies of the server, follows its redirects, and fills the hosted pages it meets (the
 * sign-in form; the consent page, answering `consent`) until the server sends it to the
 * app (another origin, or a private-use scheme). Every page it passes is a real page of
 * the real server.
 */
export interface BrowseOptions {
  /** Who signs in when the sign-in form appears; without it, reaching the form throws. */
  email?: string;
  password?: string;
  /** The consent page's answer. */
  consent?: 'allow' | 'deny';
  /** The authenticator app's code, when the second step's page appears. */
  code?: () => string;
}

export interface Visit {
  /** Where the server sent the browser in the end (the app's redirect URI and its query). */
  url: URL;
  /** The server paths the browser passed through, in order. */
  path: string[];
}

export class OAuthBrowser {
  readonly jar = new Map<string, string>();
  constructor(readonly base: string) {}

  cookie(): string {
    return [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  #keep(res: Response) {
    for (const c of res.headers.getSetCookie()) {
      const [pair = ''] = c.split(';');
      const at = pair.indexOf('=');
      const name = pair.slice(0, at);
      const value = pair.slice(at + 1);
      if (/max-age=0|expires=thu, 01 jan 1970/i.test(c) || value === '') this.jar.delete(name);
      else this.jar.set(name, value);
    }
  }

  async request(url: string, init: RequestInit = {}): Promise<Response> {
    const res = await fetch(new URL(url, this.base), {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers as Record<string, string>), cookie: this.cookie() },
    });
    this.#keep(res);
    return res;
  }

  async #post(url: string, form: Record<string, string>): Promise<Response> {
    return this.request(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        origin: new URL(this.base).origin,
      },
      body: new URLSearchParams(form).toString(),
    });
  }

  /** Follows the server from `start` until it sends the browser elsewhere. */
  async browse(start: URL | string, options: BrowseOptions = {}): Promise<Visit> {
    let url = new URL(start, this.base);
    const path: string[] = [];
    let signedIn = false;
    for (let hop = 0; hop < 20; hop++) {
      if (url.origin !== new URL(this.base).origin) return { url, path };
      path.push(url.pathname);
      let res = await this.request(url.href);
      if (res.status === 200 && url.pathname === '/sign-in') {
        if (signedIn) throw new Error('the sign-in form came back after signing in');
        if (!options.email) throw new Error(`reached the sign-in form: ${url.href}`);
        const csrf = /name="_csrf" value="([^"]+)"/.exec(await res.text())?.[1] ?? '';
        res = await this.#post(url.href, {
          _csrf: csrf,
          email: options.email,
          password: options.password ?? '',
        });
        signedIn = true;
        path.push(`POST ${url.pathname}`);
      } else if (res.status === 200 && url.pathname === '/sign-in/verify') {
        if (!options.code) throw new Error('reached the second step without a code');
        const csrf = /name="_csrf" value="([^"]+)"/.exec(await res.text())?.[1] ?? '';
        res = await this.#post(url.href, { _csrf: csrf, code: options.code() });
        path.push(`POST ${url.pathname}`);
      } else if (res.status === 200 && /\/interaction\//.test(url.pathname)) {
        const page = await res.text();
        const csrf = /name="_csrf" value="([^"]+)"/.exec(page)?.[1] ?? '';
        const action = /<form method="post" action="([^"]+)"/.exec(page)?.[1];
        if (!options.consent || !action)
          throw new Error(`an interaction page: ${page.slice(0, 300)}`);
        res = await this.#post(new URL(action.replaceAll('&amp;', '&'), url).href, {
          _csrf: csrf,
          decision: options.consent,
        });
        path.push(`POST ${new URL(action, url).pathname}`);
      }
      const location = res.headers.get('location');
      if (!location)
        throw new Error(`no redirect from ${url.href}: ${res.status} ${await res.text()}`);
      url = new URL(location, url);
    }
    throw new Error(`too many redirects: ${path.join(' -> ')}`);
  }
}
