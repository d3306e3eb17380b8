import { LatchkeyError } from './errors.js';

export type StorageKind = 'local' | 'session' | 'memory';

export interface KeyValueStore {
  get(key: string): string | null;
  set(key: string, value: string): void;
  remove(key: string): void;
}

/**
 * A store of the chosen kind. A browser that refuses Web Storage (blocked cookies, some
 * private modes, sandboxed frames) gets memory instead, so sign-in still works in that tab.
 * A storage that fails later (full, revoked) loses the write and reads nothing, never throws:
 * the tab keeps its tokens in memory through the client.
 */
export function openStore(kind: StorageKind): KeyValueStore {
  if (['local', 'session', 'memory'].indexOf(kind) < 0) {
    throw new LatchkeyError(
      'invalid_option',
      `storage must be 'local', 'session' or 'memory', not ${JSON.stringify(kind)}`,
    );
  }
  const map: Record<string, string> = {};
  let web: Pick<Storage, 'getItem' | 'setItem' | 'removeItem'> = {
    getItem: (key) => (key in map ? (map[key] as string) : null),
    setItem: (key, value) => {
      map[key] = value;
    },
    removeItem: (key) => {
      delete map[key];
    },
  };
  try {
    if (kind !== 'memory') {
      const probe = 'latchkey:probe';
      const chosen = kind === 'local' ? localStorage : sessionStorage;
      chosen.setItem(probe, '1');
      chosen.removeItem(probe);
      web = chosen;
    }
  } catch {}
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
      } catch {}
    },
    remove: (key) => {
      try {
        web.removeItem(key);
      } catch {}
    },
  };
}
