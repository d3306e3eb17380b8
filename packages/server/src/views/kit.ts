import { type Child, type Html, html } from './html.js';

/** A message at the top of a page or a panel: an error, or a notice. */
export interface Alert {
  kind: 'error' | 'notice';
  message: string;
  details?: string[];
}

/** An alert box; an error is announced at once (role=alert), a notice politely (role=status). */
export function alertBox(a: Alert | undefined, id?: string): Html | undefined {
  if (!a) return undefined;
  const list = a.details?.length
    ? html`<ul>${a.details.map((d) => html`<li>${d}</li>`)}</ul>`
    : undefined;
  return html`<div class="alert ${a.kind}" role="${a.kind === 'error' ? 'alert' : 'status'}"${id && html` id="${id}"`}>${a.message}${list}</div>`;
}

/** The CSRF token every form that changes something carries. */
export const csrfField = (csrf: string) => html`<input type="hidden" name="_csrf" value="${csrf}">`;

/** Hidden form fields (a one-time link's token, where to go next). */
export const hiddenFields = (fields: Record<string, string>) =>
  Object.entries(fields).map(
    ([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`,
  );

export interface FieldInput {
  name: string;
  label: string;
  type?: string;
  value?: string | number | null;
  hint?: string;
  required?: boolean;
  autocomplete?: string;
  autofocus?: boolean;
  /** The page's alert (id="alert") is about this field: marked invalid and described by it. */
  invalid?: boolean;
  /** The element id; `f-{name}` unless given. */
  id?: string;
  /** More attributes (min, max, maxlength, minlength, pattern…); values are escaped. */
  attrs?: Record<string, string | number>;
}

const idOf = (f: { name: string; id?: string }) => f.id ?? `f-${f.name}`;

const attributes = (attrs: Record<string, string | number> | undefined): Child =>
  Object.entries(attrs ?? {}).map(([name, value]) => html` ${name}="${value}"`);

const hintOf = (id: string, hint: string | undefined) =>
  hint && html`<p class="hint" id="${id}-hint">${hint}</p>`;

const describedBy = (id: string, f: { hint?: string; invalid?: boolean }) => {
  const ids = [f.hint ? `${id}-hint` : '', f.invalid ? 'alert' : ''].filter(Boolean).join(' ');
  return ids && html` aria-describedby="${ids}"`;
};

/** A labelled input, with its hint read out after the label. */
export function field(f: FieldInput): Html {
  const id = idOf(f);
  const value = f.value !== undefined && f.value !== null && f.value !== '' && f.value;
  return html`<label for="${id}">${f.label}</label>
<input id="${id}" name="${f.name}" type="${f.type ?? 'text'}"${value !== false && html` value="${value}"`}${f.required && html` required`} autocomplete="${f.autocomplete ?? 'off'}"${attributes(f.attrs)}${f.autofocus && html` autofocus`}${f.invalid && html` aria-invalid="true"`}${describedBy(id, f)}>${hintOf(id, f.hint)}`;
}

export function textarea(f: FieldInput): Html {
  const id = idOf(f);
  return html`<label for="${id}">${f.label}</label>
<textarea id="${id}" name="${f.name}"${describedBy(id, f)}${attributes(f.attrs)}>${f.value ?? ''}</textarea>${hintOf(id, f.hint)}`;
}

export function checkbox(f: {
  name: string;
  label: string;
  checked: boolean;
  hint?: string;
  id?: string;
}): Html {
  const id = idOf(f);
  return html`<label class="inline" for="${id}"><input type="checkbox" id="${id}" name="${f.name}" value="on"${f.checked && html` checked`}${describedBy(id, f)}> ${f.label}</label>${hintOf(id, f.hint)}`;
}

/** A select; each option is [value, text], or one string for both. */
export function select(f: {
  name: string;
  label: string;
  options: readonly (string | readonly [string, string])[];
  value: string;
}): Html {
  const id = idOf(f);
  const options = f.options.map((o) => {
    const [value, text] = typeof o === 'string' ? [o, o] : o;
    return html`<option value="${value}"${value === f.value && html` selected`}>${text}</option>`;
  });
  return html`<label for="${id}">${f.label}</label><select id="${id}" name="${f.name}">${options}</select>`;
}

/** A value with a copy button (the button works through the admin area's script). */
export function copyable(label: string, value: string, id: string): Html {
  return html`<div class="row"><span>${label}</span> <code id="${id}">${value}</code><button type="button" class="plain" data-copy="${id}">Copy<span class="visually-hidden"> ${label}</span></button></div>`;
}

/** A one-button form (with CSRF) that changes something. */
export function actionButton(
  csrf: string,
  action: string,
  text: string,
  options: { danger?: boolean; confirm?: string } = {},
): Html {
  return html`<form method="post" action="${action}"${options.confirm && html` data-confirm="${options.confirm}"`}>${csrfField(csrf)}<button type="submit" class="${options.danger ? 'danger' : 'plain'}">${text}</button></form>`;
}

/** A table that scrolls sideways on a phone; the wrapper is focusable so keyboards can scroll it. */
export function table(caption: string, headings: string[], rows: Child[][]): Html {
  if (rows.length === 0) return html`<p>${caption}: none.</p>`;
  return html`<div class="scroll" tabindex="0" role="region" aria-label="${caption}"><table><caption class="visually-hidden">${caption}</caption><thead><tr>${headings.map(
    (h) => html`<th scope="col">${h}</th>`,
  )}</tr></thead><tbody>${rows.map(
    (r) =>
      html`<tr>${r.map((c, i) => html`<td${headings[i] && html` data-label="${headings[i]}"`}>${c}</td>`)}</tr>`,
  )}</tbody></table></div>`;
}

/** A time for people: UTC, to the minute, with the exact value in a <time>. */
export const when = (iso: string | null | undefined): Html =>
  iso
    ? html`<time datetime="${iso}">${iso.slice(0, 16).replace('T', ' ')} UTC</time>`
    : html`&mdash;`;

/** A link onwards, under a page's content. */
export const onward = (link: { href: string; text: string } | undefined) =>
  link && html`<nav><a href="${link.href}">${link.text}</a></nav>`;

/** The document around every page: its title, its style sheet under the CSP nonce, its body. */
export function documentOf(p: {
  title: string;
  nonce: string;
  styles: Html;
  referrer: 'no-referrer' | 'same-origin';
  head?: Html;
  body: Child;
}): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="${p.referrer}">${p.head}
<title>${p.title}</title>
<style nonce="${p.nonce}">${p.styles}</style>
</head>
<body>
${p.body}
</body>
</html>`;
}
