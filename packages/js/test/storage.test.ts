// @vitest-environment happy-dom
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LatchkeyError } from '../src/errors.js';
import { openStore, type StorageKind } from '../src/storage.js';

afterEach(() => {
  vi.restoreAllMocks();
  localStorage.clear();
  sessionStorage.clear();
});

describe('storage', () => {
  it.each<[StorageKind, () => Storage | null]>([
    ['local', () => localStorage],
    ['session', () => sessionStorage],
    ['memory', () => null],
  ])('%s keeps, replaces and forgets values', (kind, web) => {
    const store = openStore(kind);
    expect(store.get('k')).toBeNull();
    store.set('k', 'one');
    store.set('k', 'two');
    expect(store.get('k')).toBe('two');
    expect(web()?.getItem('k') ?? null).toBe(kind === 'memory' ? null : 'two');
    store.remove('k');
    expect(store.get('k')).toBeNull();
  });

  it('local storage is shared by every store of the page (as by tabs)', () => {
    openStore('local').set('latchkey:pk_test_a', 'x');
    expect(openStore('local').get('latchkey:pk_test_a')).toBe('x');
    expect(openStore('memory').get('latchkey:pk_test_a')).toBeNull();
  });

  it('falls back to memory when the browser refuses Web Storage', () => {
    vi.spyOn(Storage.prototype, 'setItem').mockImplementation(() => {
      throw new DOMException('denied', 'SecurityError');
    });
    const store = openStore('local');
    store.set('k', 'v');
    expect(store.get('k')).toBe('v');
  });

  it('a full storage loses the write, never throws', () => {
    const store = openStore('session');
    vi.spyOn(Storage.prototype, 'setItem').mockImplementation(() => {
      throw new DOMException('full', 'QuotaExceededError');
    });
    expect(() => store.set('k', 'v')).not.toThrow();
  });

  it('refuses an unknown kind with a LatchkeyError that names the choices', () => {
    const attempt = () => openStore('cookie' as StorageKind);
    expect(attempt).toThrow(LatchkeyError);
    expect(attempt).toThrow(/'local', 'session' or 'memory'/);
  });

  it('memory stores are separate', () => {
    const a = openStore('memory');
    a.set('k', '1');
    expect(openStore('memory').get('k')).toBeNull();
  });
});
