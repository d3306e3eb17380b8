/** The page layer: one auto-escaping template, so no value reaches a page unescaped. */

import { describe, expect, it } from 'vitest';
import type { Tenant } from '../src/modules/tenants/index.js';
import { layout as adminLayout } from '../src/views/admin/layout.js';
import { userPage } from '../src/views/admin/users.js';
import { buttonPage, messagePage, signInPage } from '../src/views/hosted.js';
import { html, trusted } from '../src/views/html.js';
import { alertBox, field, select, table } from '../src/views/kit.js';

const HOSTILE = `"><script>alert(1)</script><img src=x onerror='x'>&amp;`;
const ESCAPED =
  '&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=&#39;x&#39;&gt;&amp;amp;';

const tenant = {
  id: 'ten_1',
  name: HOSTILE,
  environment: 'development',
  branding: { logoUrl: `https://cdn.example/logo.png?"${HOSTILE}`, primaryColor: '#112233' },
} as unknown as Tenant;

describe('html``', () => {
  it('escapes text and attribute values, keeps nested markup, joins arrays, leaves out empty values', () => {
    const items = ['a<b', 'c&d'];
    const out = html`<p title="${HOSTILE}">${HOSTILE}</p><ul>${items.map((i) => html`<li>${i}</li>`)}</ul>${false}${null}${undefined}${0}`;
    expect(String(out)).toBe(
      `<p title="${ESCAPED}">${ESCAPED}</p><ul><li>a&lt;b</li><li>c&amp;d</li></ul>0`,
    );
  });

  it('never trusts a string: only html`` or trusted() is markup', () => {
    const markup = '<b>bold</b>';
    expect(String(html`${markup}`)).toBe('&lt;b&gt;bold&lt;/b&gt;');
    expect(String(html`${trusted(markup)}`)).toBe(markup);
  });
});

describe('the kit and the pages', () => {
  it('an alert without details has no list and no stray text', () => {
    expect(String(alertBox({ kind: 'error', message: 'Wrong', details: [] }))).toBe(
      '<div class="alert error" role="alert">Wrong</div>',
    );
  });

  it('the kit escapes every value it is given', () => {
    const parts = [
      field({
        name: 'n',
        label: HOSTILE,
        value: HOSTILE,
        hint: HOSTILE,
        attrs: { pattern: HOSTILE },
      }),
      select({ name: 's', label: HOSTILE, options: [[HOSTILE, HOSTILE]], value: HOSTILE }),
      alertBox({ kind: 'error', message: HOSTILE, details: [HOSTILE] }),
      table(HOSTILE, [HOSTILE], [[HOSTILE]]),
    ].map(String);
    for (const part of parts) {
      expect(part).not.toContain('<script>');
      expect(part).not.toContain("onerror='x'");
      expect(part).toContain(ESCAPED);
    }
  });

  it('a tenant, a user or a message cannot inject markup into a hosted page or an admin page', () => {
    const ctx = { tenant, nonce: 'n0nce' };
    const pages = [
      signInPage({
        ctx,
        query: `pk=${HOSTILE}`,
        csrf: HOSTILE,
        email: HOSTILE,
        alert: { kind: 'error', message: HOSTILE },
        providers: [{ id: HOSTILE, name: HOSTILE }],
        passwordEnabled: true,
      }),
      messagePage(ctx, HOSTILE, HOSTILE, { href: HOSTILE, text: HOSTILE }),
      buttonPage({
        ctx,
        title: HOSTILE,
        message: HOSTILE,
        action: HOSTILE,
        csrf: HOSTILE,
        button: HOSTILE,
        hidden: { [HOSTILE]: HOSTILE },
      }),
      adminLayout({
        viewer: { email: HOSTILE, superuser: false, nonce: HOSTILE, csrf: HOSTILE },
        title: HOSTILE,
        body: HOSTILE,
        tenant: { tenant, section: 'users' },
      }),
      userPage({
        viewer: { email: HOSTILE, superuser: true, nonce: 'n', csrf: HOSTILE },
        tenant,
        user: {
          id: HOSTILE,
          email: HOSTILE,
          name: HOSTILE,
          roles: [HOSTILE],
          disabled: false,
          emailVerified: false,
          createdAt: HOSTILE,
        } as never,
        identities: [
          {
            provider: HOSTILE,
            subject: HOSTILE,
            email: HOSTILE,
            emailVerified: true,
            picture: HOSTILE,
            createdAt: HOSTILE,
            lastUsedAt: null,
          } as never,
        ],
        factors: [
          {
            id: HOSTILE,
            type: 'totp',
            name: HOSTILE,
            confirmed: true,
            createdAt: HOSTILE,
            lastUsedAt: HOSTILE,
          },
        ],
        sessions: [
          {
            id: HOSTILE,
            createdAt: HOSTILE,
            lastUsedAt: HOSTILE,
            ip: HOSTILE,
            userAgent: HOSTILE,
            revokedAt: null,
          } as never,
        ],
      }),
    ].map(String);
    for (const page of pages) {
      expect(page).not.toContain('<script>alert');
      expect(page).not.toContain("onerror='x'");
      expect(page).toContain('&lt;script&gt;');
    }
  });
});
