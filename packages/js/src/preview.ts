/**
 * The admin area's Branding preview (dist/preview.js, served to the admin page only; not
 * part of latchkey.js, so the script tag's budget stays as it is): the very buttons that
 * `mount()` draws, from a configuration the admin is typing instead of /public/config.
 * A click signs nobody in.
 */
import type { PublicConfig } from './types.js';
import { renderButtons } from './ui.js';

function preview(target: Element, config: PublicConfig): () => void {
  return renderButtons(
    { getConfig: () => Promise.resolve(config), signInWith: () => Promise.resolve() },
    target,
    { redirectUrl: location.href },
  );
}

(window as unknown as { LatchkeyPreview: typeof preview }).LatchkeyPreview = preview;
