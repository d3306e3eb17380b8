import { describe, expect, it } from 'vitest';
import { parseCallback, withoutFragment } from '../src/fragment.js';
import { decodeJwt } from '../src/jwt.js';

describe('the sign-in answer in a fragment', () => {
  it('reads a hosted-page answer (form-encoded)', () => {
    const url =
      'https://app.example/callback?x=1#access_token=eyJ.a.b&token_type=Bearer&expires_in=600&tenant_id=t1&state=s%2F%3D&code=c_1';
    expect(parseCallback(url)).toEqual({
      access_token: 'eyJ.a.b',
      token_type: 'Bearer',
      expires_in: '600',
      tenant_id: 't1',
      state: 's/=',
      code: 'c_1',
    });
    expect(withoutFragment(url)).toBe('https://app.example/callback?x=1');
  });

  it('reads an error answer', () => {
    expect(parseCallback('https://a.example/#error=access_denied&state=s')).toEqual({
      error: 'access_denied',
      state: 's',
    });
  });

  it('is null for a URL without a sign-in answer', () => {
    expect(parseCallback('https://a.example/callback')).toBeNull();
    expect(parseCallback('https://a.example/callback#')).toBeNull();
    expect(parseCallback('https://a.example/#section-2')).toBeNull();
    expect(parseCallback('https://a.example/#state=only')).toBeNull();
    expect(withoutFragment('https://a.example/p')).toBe('https://a.example/p');
  });
});

describe('decodeJwt', () => {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

  it('reads the payload, UTF-8 included', () => {
    const payload = { sub: 'u1', email: 'zoë@example.com', name: 'Zoë 名前', roles: ['a'] };
    expect(decodeJwt(`${part({ alg: 'RS256' })}.${part(payload)}.sig`)).toEqual(payload);
  });

  it('is null for anything that is not a JWT with an object payload', () => {
    expect(decodeJwt('')).toBeNull();
    expect(decodeJwt('abc')).toBeNull();
    expect(decodeJwt('a.!!!.c')).toBeNull();
    expect(decodeJwt(`a.${part('text')}.c`)).toBeNull();
    expect(decodeJwt(`a.${part(null)}.c`)).toBeNull();
  });
});
