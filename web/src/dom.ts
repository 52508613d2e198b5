// A few DOM helpers: build elements with text content only (never innerHTML, so data cannot inject
// markup), and show what went wrong in a status line.
import { ApiError } from './api.js';

type Attrs = Record<string, string | number | boolean | undefined | ((ev: Event) => void)>;
type Child = Node | string | number | null | undefined | false;

/** h('button', { type: 'button', onclick: f }, 'Save'): attributes, `on*` listeners, then children. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') el.addEventListener(name.slice(2), value);
    else if (value === true) el.setAttribute(name, '');
    else el.setAttribute(name, String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    el.append(typeof child === 'object' ? child : String(child));
  }
  return el;
}

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`#${id} is missing from index.html`);
  return el as T;
}

/** The message of an error, with the field messages of a validation failure. */
export function describeError(err: unknown): string {
  if (err instanceof ApiError) {
    const fields = err.messages.map((m) => `${m.property}: ${m.message}`);
    return fields.length > 0 && !err.message.includes(fields[0]!) ? `${err.message} (${fields.join('; ')})` : err.message;
  }
  return err instanceof Error ? err.message : String(err);
}

/** A status line (role=status or alert in the page): an error, a confirmation, or nothing. */
export function say(el: HTMLElement, text: string, kind: 'error' | 'ok' | 'info' = 'info'): void {
  el.textContent = text;
  el.dataset.kind = kind;
}

export function sayError(el: HTMLElement, err: unknown): void {
  say(el, describeError(err), 'error');
}

export function formatTime(ms: number): string {
  return new Date(ms).toLocaleString();
}

/** The value of a named control of a form. */
export function field(form: HTMLFormElement, name: string): string {
  const control = form.elements.namedItem(name);
  if (control instanceof HTMLInputElement && control.type === 'checkbox') return control.checked ? 'true' : 'false';
  if (control instanceof HTMLInputElement || control instanceof HTMLSelectElement || control instanceof HTMLTextAreaElement) return control.value;
  throw new Error(`form has no control ${name}`);
}

/** The field messages of a validation failure as a list (emptied for anything else). */
export function showMessages(list: HTMLElement, err: unknown): void {
  const messages = err instanceof ApiError ? err.messages : [];
  list.replaceChildren(...messages.map((m) => h('li', {}, h('code', {}, m.property || '(body)'), ` ${m.message}`)));
}

/** A refusal: with field messages, the status line says so and the list names each field; else the error's message. */
export function sayRefused(status: HTMLElement, list: HTMLElement, err: unknown, what: string): void {
  showMessages(list, err);
  if (err instanceof ApiError && err.messages.length > 0) say(status, `${what}: ${err.messages.length === 1 ? 'one problem' : `${err.messages.length} problems`} below`, 'error');
  else sayError(status, err);
}

/**
 * Gives each body cell of a table its column's heading as data-label, which narrow screens show
 * beside the cell when console.css lays the rows out as cards (table.cards). Cells under a heading
 * that is only for screen readers (the actions) get none.
 */
export function labelCells(table: HTMLTableElement): void {
  const headings = [...(table.tHead?.rows[0]?.cells ?? [])].map((th) => (th.querySelector('.sr-only') ? '' : (th.textContent ?? '').trim()));
  for (const body of table.tBodies) {
    for (const row of body.rows) {
      [...row.cells].forEach((cell, i) => {
        const label = headings[i];
        if (label) cell.dataset.label = label;
      });
    }
  }
}
