import { Latchkey as headless } from './client.js';
import type { LatchkeyClient, LatchkeyOptions } from './types.js';
import { renderButtons } from './ui.js';

/**
 * The client of a publishable key with its sign-in buttons (`mount`): the main entry point's
 * and the script tag's. The same object as `@latchkey/js/client` gives for the key, which
 * gains `mount` here, whichever entry point made it first.
 */
export function Latchkey(options: LatchkeyOptions): LatchkeyClient {
  const client = headless(options) as LatchkeyClient;
  if (!client.mount) {
    client.mount = (target, mountOptions) => renderButtons(client, target, mountOptions);
  }
  return client;
}
