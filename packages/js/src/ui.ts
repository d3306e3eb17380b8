import { LatchkeyError, missingRedirectUrl } from './errors.js';
import { mark } from './marks.js';
import type { LatchkeyClient, MountOptions, PublicConfig, SignInMethod } from './types.js';

/** Resets what the page could pass down (`all: initial`); the page's rules cannot reach in. */
const CSS =
  ':host{all:initial;display:block}' +
  '.lk{box-sizing:border-box;max-width:400px;margin:0 auto;padding:24px;border:1px solid #d0d7de;border-radius:12px;background:#fff;color:#1f2328;text-align:center;font:15px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}' +
  'img{display:block;height:40px;max-width:100%;margin:0 auto 12px}' +
  'h2{margin:0 0 16px;font-size:18px;font-weight:600;overflow-wrap:anywhere}' +
  'button{all:unset;box-sizing:border-box;display:flex;align-items:center;justify-content:center;gap:10px;width:100%;min-height:44px;margin-top:10px;padding:10px 16px;border:1px solid #8c959f;border-radius:8px;background:#fff;color:#1f2328;font-weight:500;cursor:pointer}' +
  'button:hover{background:#f6f8fa}' +
  'button:focus-visible{outline:3px solid var(--lk-c,#0969da);outline-offset:2px}' +
  '.e,.e:hover{background:var(--lk-c,#1f2328);border-color:var(--lk-c,#1f2328);color:var(--lk-t,#fff)}' +
  '.e:hover{filter:brightness(.9)}' +
  'svg{flex:none;width:20px;height:20px}' +
  'small{padding:0 6px;border:1px solid;border-radius:9px;font-size:12px}' +
  'p{margin:12px 0 0;font-size:14px}' +
  '[role=alert]{color:#cf222e}' +
  '[role=alert]:empty{margin:0}';

let shared: CSSStyleSheet | undefined;

/** Constructable style sheets need no 'unsafe-inline'; older browsers get a <style> with `nonce`. */
function style(root: ShadowRoot, nonce: string | undefined): void {
  if ('adoptedStyleSheets' in root && typeof CSSStyleSheet.prototype.replaceSync === 'function') {
    if (!shared) {
      shared = new CSSStyleSheet();
      shared.replaceSync(CSS);
    }
    root.adoptedStyleSheets = [shared];
    return;
  }
  const sheet = el('style', CSS);
  if (nonce) sheet.nonce = nonce;
  root.append(sheet);
}

/** Black or white, whichever contrasts more with `hex` (WCAG 2 relative luminance). */
function textOn(hex: string): string {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  const l = 0.2126 * r + 0.7152 * g + 0.0722 * b;
  return (l + 0.05) / 0.05 > 1.05 / (l + 0.05) ? '#000' : '#fff';
}

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  text?: string,
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  // Text, never markup: a tenant name like "<b>Acme</b>" shows as typed.
  if (text) node.textContent = text;
  return node;
}

/** What the buttons need of a client (the admin area's Branding preview passes its own). */
export type ButtonsClient = Pick<LatchkeyClient, 'getConfig' | 'signInWith'>;

export function renderButtons(
  client: ButtonsClient,
  target: string | Element,
  options: MountOptions,
): () => void {
  const parent = typeof target === 'string' ? document.querySelector(target) : target;
  if (!parent) {
    throw new LatchkeyError(
      'mount_target_not_found',
      `Nothing on the page matches ${String(target)}; call mount() once the element exists`,
    );
  }
  if (!options?.redirectUrl) {
    throw missingRedirectUrl();
  }
  const host = el('div');
  host.setAttribute('data-latchkey', '');
  const root = host.attachShadow({ mode: 'open' });
  style(root, options.nonce);
  const box = el('div');
  box.className = 'lk';
  box.setAttribute('aria-busy', 'true');
  const alert = el('p');
  alert.setAttribute('role', 'alert');
  root.append(box);
  parent.append(host);
  let live = true;

  function button(
    method: SignInMethod,
    label: string,
    className: string,
    development?: boolean,
  ): HTMLButtonElement {
    const b = el('button');
    b.type = 'button';
    b.className = className;
    b.append(mark(method));
    b.append(el('span', label));
    // Development mode: Latchkey's own page stands in for the provider.
    if (development) b.append(el('small', 'dev'));
    b.onclick = () => {
      alert.textContent = '';
      client.signInWith(method, options).catch((error: Error) => {
        alert.textContent = error.message;
      });
    };
    return b;
  }

  function draw(config: PublicConfig): void {
    const { logoUrl, primaryColor } = config.branding;
    if (primaryColor && /^#[0-9a-f]{6}$/i.test(primaryColor)) {
      // Custom properties through the CSSOM: allowed under a style-src without 'unsafe-inline'.
      host.style.setProperty('--lk-c', primaryColor);
      host.style.setProperty('--lk-t', textOn(primaryColor));
    }
    if (logoUrl) {
      // Decorative: the tenant's name follows as text.
      const img = el('img');
      img.alt = '';
      img.src = logoUrl;
      box.append(img);
    }
    box.append(el('h2', `Sign in to ${config.name}`));
    for (const p of config.providers) {
      box.append(button(p.id, `Continue with ${p.name}`, 'p', p.mode === 'development'));
    }
    if (config.passwordEnabled) box.append(button('email', 'Continue with e-mail', 'e'));
    if (!config.providers.length && !config.passwordEnabled) {
      box.append(el('p', `No sign-in method is turned on for ${config.name}.`));
    }
  }

  client
    .getConfig()
    .then(
      (config) => {
        if (live) draw(config);
      },
      (error: Error) => {
        alert.textContent = `Sign-in is unavailable: ${error.message}`;
      },
    )
    .then(() => {
      box.append(alert);
      box.removeAttribute('aria-busy');
    });
  return () => {
    live = false;
    host.remove();
  };
}
