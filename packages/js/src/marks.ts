import type { ProviderId } from './types.js';

/**
 * The providers' marks as their brand guides show them (Apple and GitHub in the text
 * colour): a viewBox, then fill and path pairs. Drawn with DOM calls, not markup, so that a
 * page with Trusted Types still renders them.
 */
const MARKS: Record<ProviderId | 'email', string[]> = {
  google: [
    '0 0 48 48',
    '#EA4335',
    'M24 9.5c3.5 0 6.7 1.2 9.2 3.6l6.9-6.9C35.9 2.4 30.5 0 24 0C14.6 0 6.5 5.4 2.6 13.2l7.9 6.2C12.4 13.7 17.7 9.5 24 9.5z',
    '#4285F4',
    'M47 24.6c0-1.6-.2-3.1-.4-4.6H24v9h12.9c-.5 3-2.2 5.5-4.7 7.2l7.7 6c4.5-4.2 7.1-10.4 7.1-17.6z',
    '#FBBC05',
    'M10.5 28.6c-.5-1.5-.7-3-.7-4.6s.2-3.1.7-4.6l-8-6.2C.9 16.5 0 20.1 0 24c0 3.9.9 7.5 2.6 10.8l7.9-6.2z',
    '#34A853',
    'M24 48c6.5 0 11.9-2.1 15.9-5.8l-7.7-6c-2.2 1.4-5 2.3-8.2 2.3c-6.3 0-11.6-4.2-13.5-9.9l-8 6.2C6.5 42.6 14.6 48 24 48z',
  ],
  facebook: [
    '0 0 24 24',
    '#1877F2',
    'M24 12a12 12 0 1 0-13.9 11.9v-8.4H7.1V12h3V9.4c0-3 1.8-4.7 4.6-4.7c1.3 0 2.6.2 2.6.2v3h-1.5c-1.5 0-1.9.9-1.9 1.9V12h3.3l-.5 3.5h-2.8v8.4A12 12 0 0 0 24 12z',
    '#fff',
    'M16.7 15.5L17.2 12h-3.3V9.8c0-1 .4-1.9 1.9-1.9h1.5V4.9s-1.3-.2-2.7-.2c-2.7 0-4.5 1.6-4.5 4.7V12H7.1v3.5h3v8.4a12.1 12.1 0 0 0 3.8 0v-8.4z',
  ],
  github: [
    '0 0 24 24',
    'currentColor',
    'M12 .3a12 12 0 0 0-3.8 23.4c.6.1.8-.3.8-.6L9 21.1c-3.3.7-4-1.6-4-1.6c-.6-1.4-1.4-1.8-1.4-1.8c-1.1-.7.1-.7.1-.7c1.2.1 1.8 1.2 1.8 1.2c1.1 1.8 2.8 1.3 3.5 1c.1-.8.5-1.3.8-1.6c-2.7-.3-5.5-1.3-5.5-5.9c0-1.3.5-2.4 1.3-3.3c-.2-.3-.6-1.5.1-3.1c0 0 1-.4 3.3 1.2a11.5 11.5 0 0 1 6 0c2.2-1.6 3.3-1.2 3.3-1.2c.6 1.6.2 2.8.1 3.1a4.7 4.7 0 0 1 1.2 3.3c0 4.6-2.8 5.6-5.5 5.9c.4.3.8 1.1.8 2.2l0 3.3c0 .3.2.7.9.6A12 12 0 0 0 12 .3',
  ],
  apple: [
    '0 0 24 24',
    'currentColor',
    'M12.2 6.9c-1 0-2.5-1.1-4-1c-2 0-3.9 1.1-5 3c-2.1 3.7-.5 9.1 1.6 12.1c1 1.4 2.2 3.1 3.7 3c1.6-.1 2.1-1 4-1c1.8 0 2.3 1 3.9 1c1.7-.1 2.7-1.5 3.7-3c1.2-1.7 1.7-3.3 1.7-3.4c-.1 0-3.2-1.2-3.2-4.9c-.1-3 2.4-4.5 2.6-4.5c-1.5-2.1-3.7-2.3-4.4-2.4c-2-.2-3.7 1.1-4.6 1.1zm3.3-3.1c.9-1 1.4-2.4 1.3-3.8c-1.2.1-2.7.8-3.6 1.8c-.7.9-1.4 2.4-1.2 3.7c1.3.1 2.7-.7 3.5-1.7',
  ],
  microsoft: [
    '0 0 23 23',
    '#F35325',
    'M1 1h10v10H1z',
    '#81BC06',
    'M12 1h10v10H12z',
    '#05A6F0',
    'M1 12h10v10H1z',
    '#FFBA08',
    'M12 12h10v10H12z',
  ],
  // An envelope, stroked in the text colour.
  email: ['0 0 24 24', 'none', 'M3 5h18v14H3zm0 1 9 7 9-7'],
};

const NS = 'http://www.w3.org/2000/svg';

export function mark(id: ProviderId | 'email'): SVGSVGElement {
  const spec = MARKS[id];
  const svg = document.createElementNS(NS, 'svg');
  svg.setAttribute('viewBox', spec[0] as string);
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('focusable', 'false');
  for (let i = 1; i < spec.length; i += 2) {
    const path = document.createElementNS(NS, 'path');
    path.setAttribute('fill', spec[i] as string);
    path.setAttribute('d', spec[i + 1] as string);
    if (id === 'email') {
      path.setAttribute('stroke', 'currentColor');
      path.setAttribute('stroke-width', '2');
      path.setAttribute('stroke-linejoin', 'round');
    }
    svg.appendChild(path);
  }
  return svg;
}
