import { MARKS } from './mark-paths.js';
import type { ProviderId } from './types.js';

const NS = 'http://www.w3.org/2000/svg';

/** Drawn with DOM calls, not markup, so that a page with Trusted Types still renders them. */
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
    svg.append(path);
  }
  return svg;
}
