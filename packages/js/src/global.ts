/** The script-tag build: defines the global `Latchkey`, whose server is the script's own origin. */
import { setDefaultAuthUrl } from './client.js';
import { LatchkeyError } from './errors.js';
import { Latchkey } from './mount.js';

const script = document.currentScript as HTMLScriptElement | null;
if (script?.src) setDefaultAuthUrl(new URL(script.src).origin);

(window as unknown as { Latchkey: unknown }).Latchkey = Object.assign(Latchkey, {
  LatchkeyError,
  version: VERSION,
});

declare const VERSION: string;
