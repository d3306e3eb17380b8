/**
 * The provider registry: a provider is one file and one registry line. The type of the
 * registry makes a missing piece a compile error (the `@ts-expect-error` lines below fail
 * `tsc -b` the day they stop being errors); the runtime checks hold each definition to
 * what the flow and the settings read from it.
 */
import type { IDToken } from 'oauth4webapi';
import { describe, expect, it } from 'vitest';
import {
  PROVIDER_IDS,
  PROVIDERS,
  type ProviderDefinition,
  type ProviderId,
} from '../src/modules/social/index.js';
import { defineProvider } from '../src/modules/social/providers/types.js';

const credentials = {
  clientId: 'client',
  secret: 'secret',
  teamId: null,
  keyId: null,
  audience: null,
};

describe('the provider registry', () => {
  it('holds the five providers of the contract, each under its own id', () => {
    expect(PROVIDER_IDS).toEqual(['google', 'facebook', 'github', 'apple', 'microsoft']);
    for (const id of PROVIDER_IDS) expect(PROVIDERS[id].id).toBe(id);
  });

  it.each(PROVIDER_IDS)('%s: the definition is complete', async (id) => {
    const p: ProviderDefinition = PROVIDERS[id];
    expect(p.name).toMatch(/^\S/);
    expect(p.scope.length).toBeGreaterThan(0);
    expect(['query', 'form_post']).toContain(p.responseMode);
    expect(typeof p.authorizationParameters).toBe('object');
    for (const name of Object.keys(p.authorizationParameters)) {
      // The flow sets these itself; a provider may not replace them.
      expect(['client_id', 'redirect_uri', 'state', 'nonce', 'code_challenge']).not.toContain(name);
    }
    expect(p.defaults({ audience: null }).issuer).toMatch(/^https:\/\//);
    if (p.kind === 'oauth2') {
      expect(p.defaults({ audience: null })).toMatchObject({
        authorizationEndpoint: expect.stringMatching(/^https:\/\//),
        tokenEndpoint: expect.stringMatching(/^https:\/\//),
        apiBase: expect.stringMatching(/^https:\/\//),
      });
    } else {
      expect(p.scope.split(' ')).toContain('openid');
      const issuer = new URL(p.defaults({ audience: null }).issuer as string);
      expect(p.discoveryIssuer(issuer)).toBeInstanceOf(URL);
    }
    expect(['clientSecret', 'privateKeyPem']).toContain(p.settings.secretField);
    for (const [field, rule] of Object.entries(p.settings.extra)) {
      expect(['teamId', 'keyId', 'audience']).toContain(field);
      expect(typeof rule.check).toBe('function');
    }
    if (p.settings.secretField === 'clientSecret') {
      expect(
        await p.clientAuthentication(credentials, p.defaults({ audience: null }).issuer ?? ''),
      ).toBeTypeOf('function');
    }
  });

  it('type-checks each piece: a definition without one does not compile', () => {
    const pieces = {
      id: 'example',
      name: 'Example',
      kind: 'oauth2',
      scope: 'profile',
      defaults: () => ({ issuer: 'https://example.com' }),
      settings: PROVIDERS.github.settings,
      clientAuthentication: PROVIDERS.github.clientAuthentication,
      responseMode: 'query',
      authorizationParameters: {},
      profile: async (issuer: string) => ({
        issuer,
        subject: 'subject',
        email: null,
        emailVerified: false,
        name: null,
        picture: null,
      }),
    } as const;
    expect(defineProvider(pieces).id).toBe('example');
    const { profile: _profile, ...withoutProfile } = pieces;
    // @ts-expect-error: a provider without a profile mapping
    defineProvider(withoutProfile);
    const { responseMode: _mode, ...withoutMode } = pieces;
    // @ts-expect-error: a provider that does not say how its answer comes back
    defineProvider(withoutMode);
    // @ts-expect-error: an OpenID provider needs its issuer rules and refusal as well
    defineProvider({ ...pieces, kind: 'oidc' });
    type Registry = { [Id in ProviderId]: ProviderDefinition<Id> };
    // @ts-expect-error: a registry entry must be the definition of its own id
    const _mismatch: Registry['apple'] = PROVIDERS.google;
  });
});

describe('provider quirks, each in its own file', () => {
  const claims = (extra: Record<string, unknown>) =>
    ({ iss: 'https://issuer', sub: 'sub', aud: 'client', iat: 0, exp: 0, ...extra }) as IDToken;

  it('Apple: the name from the first answer, and email_verified as the string "true"', () => {
    const answer = new URLSearchParams({
      user: JSON.stringify({ name: { firstName: 'Ada', lastName: 'Lovelace' } }),
    });
    const { apple } = PROVIDERS;
    if (apple.kind !== 'oidc') throw new Error('Apple is an OpenID provider');
    expect(apple.profile(claims({ email: 'a@b.c', email_verified: 'true' }), answer)).toEqual({
      issuer: 'https://issuer',
      subject: 'sub',
      email: 'a@b.c',
      emailVerified: true,
      name: 'Ada Lovelace',
      picture: null,
    });
    expect(apple.profile(claims({}), new URLSearchParams({ user: '{' })).name).toBeNull();
    expect(apple.responseMode).toBe('form_post');
  });

  it("Microsoft: the issuer is the token's own directory, and the audience admits directories", () => {
    const { microsoft } = PROVIDERS;
    if (microsoft.kind !== 'oidc') throw new Error('Microsoft is an OpenID provider');
    const tid = '72f988bf-86f1-41af-91ab-2d7cd011db47';
    const template = 'https://login.microsoftonline.com/{tenantid}/v2.0';
    expect(microsoft.tokenIssuer(template, { tid })).toBe(
      `https://login.microsoftonline.com/${tid}/v2.0`,
    );
    expect(() => microsoft.tokenIssuer(template, { tid: 'evil/../x' })).toThrow(/tid/);
    const common = new URL('https://login.microsoftonline.com/common/v2.0');
    expect(microsoft.discoveryIssuer(common).href).toBe(
      'https://login.microsoftonline.com/%7Btenantid%7D/v2.0',
    );
    const consumers = { ...credentials, audience: 'consumers' };
    expect(microsoft.refusal(claims({ tid }), consumers)).toMatch(/does not admit/);
    expect(microsoft.refusal(claims({ tid }), { ...credentials, audience: tid })).toBeUndefined();
    expect(
      microsoft.profile(claims({ oid: 'oid', email: 'x@y.z' }), new URLSearchParams()),
    ).toMatchObject({ subject: 'oid', emailVerified: false });
  });

  it('pictures: only an https URL of at most 2048 characters, from where each provider puts it', async () => {
    const { google, github, facebook, microsoft } = PROVIDERS;
    if (google.kind !== 'oidc' || microsoft.kind !== 'oidc') throw new Error('OpenID providers');
    if (github.kind !== 'oauth2' || facebook.kind !== 'oauth2') throw new Error('OAuth 2');
    const none = new URLSearchParams();
    const googlePicture = (picture: unknown) => google.profile(claims({ picture }), none).picture;
    const photo = 'https://lh3.googleusercontent.com/a/ACg8ocK=s96-c';
    expect(googlePicture(photo)).toBe(photo);
    const long = `https://example.com/${'a'.repeat(2048 - 'https://example.com/'.length)}`;
    expect(googlePicture(long)).toBe(long);
    for (const refused of [
      `${long}a`,
      'http://lh3.googleusercontent.com/a/x',
      'javascript:alert(1)',
      'data:image/png;base64,iVBORw0KGgo=',
      '//lh3.googleusercontent.com/a/x',
      'https://user:pass@example.com/a.png',
      'not a url',
      '',
      42,
      undefined,
    ]) {
      expect(googlePicture(refused), String(refused)).toBeNull();
    }
    // Microsoft's photo is binary behind Graph: never a picture.
    expect(microsoft.profile(claims({ oid: 'o', picture: photo }), none).picture).toBeNull();

    const api = (answers: Record<string, unknown>) => async (path: string) => answers[path];
    const avatar = 'https://avatars.githubusercontent.com/u/583231?v=4';
    const emails: unknown[] = [];
    expect(
      (
        await github.profile(
          'https://github.com',
          api({ '/user': { id: 1, avatar_url: avatar }, '/user/emails': emails }),
        )
      ).picture,
    ).toBe(avatar);
    expect(
      (
        await github.profile(
          'https://github.com',
          api({ '/user': { id: 1, avatar_url: 'http://x/y' }, '/user/emails': emails }),
        )
      ).picture,
    ).toBeNull();
    const fbUrl = 'https://platform-lookaside.fbsbx.com/platform/profilepic/?asid=1&height=50';
    const me = (picture: unknown) =>
      api({ '/me?fields=id,name,email,picture': { id: '1', picture } });
    expect(
      (await facebook.profile('https://www.facebook.com', me({ data: { url: fbUrl, width: 50 } })))
        .picture,
    ).toBe(fbUrl);
    expect((await facebook.profile('https://www.facebook.com', me(undefined))).picture).toBeNull();
    expect(
      (await facebook.profile('https://www.facebook.com', me({ data: null }))).picture,
    ).toBeNull();
  });
});
