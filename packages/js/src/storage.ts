import { LatchkeyError } from './errors.js';

export type StorageKind = 'local' | 'session' | 'memory';

export interface KeyValueStore {
  get(key: string): string | null;
  set(key: string, value: string): void;
  remove(key: string): void;
}

export function memoryStore(): KeyValueStore {
  const map: Record<string, string> = {};
  return {
    get: (key) => (key in map ? (map[key] as string) : null),
    set: (key, value) => {
      map[key] = value;
    },
    remove: (key) => {
      delete map[key];
    },
  };
}

/**
 * A store of the chosen kind. A browser that refuses Web Storage (blocked cookies, some
 * private modes, sandboxed frames) gets memory instead, so sign-in still works in that tab.
 */
export function openStore(kind: StorageKind): KeyValueStore {
  if (kind !== 'local' && kind !== 'session' && kind !== 'memory') {
    throw new LatchkeyError(
      'invalid_option',
      `storage must be 'local', 'session' or 'memory', not ${JSON.stringify(kind)}`,
    );
  }
  if (kind === 'memory') return memoryStore();
  let web: Storage;
  try {
    web = kind === 'local' ? localStorage : sessionStorage;
    const probe = 'latchkey:probe';
    web.setItem(probe, '1');
    web.removeItem(probe);
  } catch {
    return memoryStore();
  }
  return {
    get: (key) => {
      try {
        return web.getItem(key);
      } catch {
        return null;
      }
    },
    set: (key, value) => {
      try {
        web.setItem(key, value);
      } catch {
        // Full or revoked: the tab keeps the value in memory through the client.
      }
    },
    remove: (key) => {
      try {
        web.removeItem(key);
      } catch {}
    },
  };
}
