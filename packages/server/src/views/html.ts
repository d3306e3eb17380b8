import escapeHtml from 'escape-html';

/**
 * Markup that is safe to send: made only by the `html` template (or `trusted`), so every
 * value that went into it was escaped on the way in. A page is built from these and never
 * from strings, so a value cannot be forgotten unescaped.
 */
export class Html {
  readonly #markup: string;
  private constructor(markup: string) {
    this.#markup = markup;
  }
  toString(): string {
    return this.#markup;
  }
  /** @internal Only html`` and trusted() make markup. */
  static of(markup: string): Html {
    return new Html(markup);
  }
}

/** What may stand in a template: markup as it is, text escaped, nothing for empty values. */
export type Child = Html | string | number | false | null | undefined | readonly Child[];

const render = (value: Child): string => {
  if (value instanceof Html) return value.toString();
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === false || value === null || value === undefined) return '';
  return escapeHtml(String(value));
};

/**
 * The one way to write a page: `html\`<p>${text}</p>\`` escapes `text` (for element text
 * and quoted attribute values alike), keeps nested `html` as it is, joins arrays, and
 * leaves out `false`, `null` and `undefined` (so `${cond && html\`…\`}` reads naturally).
 */
export function html(strings: TemplateStringsArray, ...values: Child[]): Html {
  let out = strings[0] as string;
  for (let i = 0; i < values.length; i++) out += render(values[i] as Child) + strings[i + 1];
  return Html.of(out);
}

/** Markup the server itself wrote (a style sheet, a fixed fragment): never user input. */
export const trusted = (markup: string): Html => Html.of(markup);
