import type { User } from '@latchkey/js';
import {
  type CSSProperties,
  createElement as h,
  type KeyboardEvent,
  type ReactElement,
  useEffect,
  useLayoutEffect,
  useRef,
  useState,
} from 'react';
import { useContextOf } from './context.js';

export interface UserButtonProps {
  /** Where to go after signing out; else the provider's `afterSignOutUrl`; else stay. */
  afterSignOutUrl?: string;
}

const FONT = '14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif';
const AVATAR: CSSProperties = {
  display: 'inline-flex',
  alignItems: 'center',
  justifyContent: 'center',
  boxSizing: 'border-box',
  width: 36,
  height: 36,
  padding: 0,
  border: '1px solid #d0d7de',
  borderRadius: '50%',
  overflow: 'hidden',
  background: '#24292f',
  color: '#fff',
  font: `600 ${FONT}`,
  cursor: 'pointer',
};
/** Between the avatar and its menu. */
const GAP = 6;
/** Placed under the avatar by `place` below; `left: 0` until then (before the first paint). */
const POPUP: CSSProperties = {
  position: 'absolute',
  left: 0,
  top: `calc(100% + ${GAP}px)`,
  zIndex: 1000,
  boxSizing: 'border-box',
  minWidth: 220,
  maxWidth: '90vw',
  padding: 6,
  border: '1px solid #d0d7de',
  borderRadius: 8,
  background: '#fff',
  color: '#1f2328',
  boxShadow: '0 8px 24px rgba(66,74,83,.2)',
  font: FONT,
  textAlign: 'left',
};
const ITEM: CSSProperties = {
  display: 'block',
  boxSizing: 'border-box',
  width: '100%',
  minHeight: 36,
  padding: '6px 10px',
  border: 0,
  borderRadius: 6,
  background: '#f6f8fa',
  color: 'inherit',
  font: 'inherit',
  textAlign: 'left',
  cursor: 'pointer',
};

/** "ada.lovelace@…" or a name (the profile's, or a claim) "Ada Lovelace" gives "AL". */
export function initials(user: User): string {
  const name = typeof user.name === 'string' ? user.name : user.email.split('@')[0];
  const words = (name || '').split(/[^a-zA-Z\u00c0-\uffff]+/).filter(Boolean);
  return (
    words
      .slice(0, 2)
      .map((w) => w.charAt(0).toUpperCase())
      .join('') || '?'
  );
}

let menus = 0;
/** The gap kept between the menu and the edges of the viewport. */
const EDGE = 8;

/**
 * The signed-in user's avatar (the profile's `picture`, else initials of the name or e-mail)
 * as a menu button (WAI-ARIA APG "Menu Button"): Enter, Space or ArrowDown opens it and
 * focuses "Sign out"; Escape or a click or focus outside closes it, Escape returning focus to
 * the button. The menu opens under the avatar and stays inside the viewport.
 */
export function UserButton({ afterSignOutUrl }: UserButtonProps): ReactElement | null {
  const latchkey = useContextOf('<UserButton>');
  const [open, setOpen] = useState(false);
  const [broken, setBroken] = useState('');
  // Never rendered on a server (no user there), so a counter cannot mismatch on hydration.
  const [id] = useState(() => `latchkey-menu-${++menus}`);
  const root = useRef<HTMLDivElement>(null);
  const button = useRef<HTMLButtonElement>(null);
  const item = useRef<HTMLButtonElement>(null);
  const popup = useRef<HTMLDivElement>(null);
  // Chosen at render time: on a server (where this renders nothing) no layout-effect warning.
  const useBeforePaint = typeof document === 'object' ? useLayoutEffect : useEffect;

  // Under the avatar, centred on it where there is room, else moved in to stay on screen:
  // the same wherever the app's layout puts the button (left, centre, right, a phone). Above
  // it only when the viewport has no room below and more above (a button in a footer).
  useBeforePaint(() => {
    if (!open) return;
    const place = () => {
      const menu = popup.current;
      const anchor = root.current;
      if (!menu || !anchor) return;
      const at = anchor.getBoundingClientRect();
      const width = menu.offsetWidth;
      const room = document.documentElement.clientWidth - width - EDGE;
      const left = Math.max(EDGE, Math.min(at.left + (at.width - width) / 2, room));
      menu.style.left = `${left - at.left}px`;
      const height = menu.offsetHeight + GAP;
      const below = document.documentElement.clientHeight - at.bottom;
      menu.style.top = `${below < height && at.top > below ? -height : at.height + GAP}px`;
    };
    place();
    addEventListener('resize', place);
    return () => removeEventListener('resize', place);
  }, [open]);

  useEffect(() => {
    if (!open) return;
    item.current?.focus();
    const away = (event: Event) => {
      if (!root.current?.contains(event.target as Node)) setOpen(false);
    };
    document.addEventListener('mousedown', away);
    document.addEventListener('focusin', away);
    return () => {
      document.removeEventListener('mousedown', away);
      document.removeEventListener('focusin', away);
    };
  }, [open]);

  const user = latchkey.user;
  if (!latchkey.isLoaded || !user) return null;

  function close(): void {
    setOpen(false);
    button.current?.focus();
  }

  function onKeyDown(event: KeyboardEvent): void {
    if (event.key === 'Escape' && open) {
      event.preventDefault();
      close();
    } else if (event.key === 'ArrowDown' && !open) {
      event.preventDefault();
      setOpen(true);
    }
  }

  async function signOut(): Promise<void> {
    setOpen(false);
    // Signed out in this browser at once; a server that cannot be reached changes nothing here.
    await latchkey.signOut().catch(() => {});
    const to = afterSignOutUrl ?? latchkey.afterSignOutUrl;
    if (to) location.assign(to);
  }

  // A picture that does not load (a host out of reach, a deleted avatar) gives way to initials.
  const picture =
    typeof user.picture === 'string' &&
    /^https:\/\//.test(user.picture) &&
    user.picture !== broken &&
    user.picture;
  const letters = initials(user);
  return h(
    'div',
    { ref: root, onKeyDown, style: { position: 'relative', display: 'inline-block' } },
    h(
      'button',
      {
        ref: button,
        type: 'button',
        // The visible initials are part of the name, so speech users can say them (WCAG 2.5.3).
        'aria-label': picture ? `Account: ${user.email}` : `${letters}, account: ${user.email}`,
        'aria-haspopup': 'menu',
        'aria-expanded': open,
        'aria-controls': open ? id : undefined,
        onClick: () => setOpen(!open),
        style: AVATAR,
      },
      picture
        ? h('img', {
            src: picture,
            alt: '',
            width: 36,
            height: 36,
            referrerPolicy: 'no-referrer',
            onError: () => setBroken(picture),
          })
        : h('span', { 'aria-hidden': true }, letters),
    ),
    open &&
      h(
        'div',
        { ref: popup, style: POPUP },
        h(
          'p',
          { style: { margin: '4px 10px 8px', overflowWrap: 'anywhere' } },
          user.name && h('strong', { style: { display: 'block' } }, user.name),
          user.email,
        ),
        h(
          'div',
          { role: 'menu', id, 'aria-label': 'Account' },
          h(
            'button',
            { ref: item, type: 'button', role: 'menuitem', onClick: signOut, style: ITEM },
            'Sign out',
          ),
        ),
      ),
  );
}
