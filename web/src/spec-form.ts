// Forms drawn from a list of field specs: each control knows the API property it edits (its path,
// e.g. "port" or "pointLocator.offset"), shows only when its condition holds, and shows the field
// message of a refusal (422 result.messages) next to itself. The editors (editors.ts) describe their
// resources with these specs instead of hand-written markup per source type.
import { ApiError } from './api.js';
import { h } from './dom.js';

export type Values = Record<string, unknown>;

export interface FieldSpec {
  /** API property path ("name", "pointLocator.offset"); the control's name. */
  path: string;
  /**
   * The control's own key when two specs edit one path under different conditions (a detector's
   * `state`: true/false or an integer, or a pattern kept as text); default the path.
   */
  key?: string;
  label: string;
  /**
   * `script`: several lines of text; `context`: `var=xid` pairs, comma-separated, as [{var, xid}];
   * `states`: `key=text` pairs, comma-separated, as [{key, text}] (a multistate point's texts).
   */
  kind: 'text' | 'number' | 'integer' | 'select' | 'checkbox' | 'password' | 'list' | 'numbers' | 'tags' | 'scalar' | 'recipients' | 'script' | 'context' | 'states';
  /** Choices of a select; a function when they depend on other fields (changeType on dataType). */
  options?: readonly string[] | ((v: Values) => readonly string[]);
  /**
   * A select's words for its choices (else the values). A label holds its select's option texts, so
   * these also keep other labels' substrings (Playwright's getByLabel('Min')) out of it.
   */
  optionText?: Readonly<Record<string, string>>;
  /** The id of a datalist whose options the text box suggests (points by name, their XIDs as values). */
  suggestions?: string;
  /** Shown (and sent) only when this holds for the values read so far. */
  when?: (v: Values) => boolean;
  /** Read-only once created (the source type). */
  fixedOnEdit?: boolean;
  placeholder?: string;
  hint?: string;
  /** Left out of the body when empty (an XID: the service generates one). */
  omitEmpty?: boolean;
}

export interface SpecForm {
  /** Builds every control once, filled from these values; `when` then only shows or hides them. */
  render(values: Values, editing: boolean): void;
  /** Puts values into the controls (only the empty ones with onlyEmpty), then shows what applies. */
  fill(values: Values, onlyEmpty: boolean): void;
  /** Shows the controls whose condition holds now, and the choices that fit (after any change). */
  refresh(): void;
  /** The values of the shown controls, as API values (numbers, booleans, lists, maps). */
  read(): Values;
  /** Puts each field message next to its control; returns the messages no control claimed. */
  showErrors(err: unknown): string[];
  clearErrors(): void;
}

const keyOf = (spec: FieldSpec) => spec.key ?? spec.path;

export function getPath(v: Values, path: string): unknown {
  return path.split('.').reduce<unknown>((o, k) => (typeof o === 'object' && o !== null ? (o as Values)[k] : undefined), v);
}

export function setPath(v: Values, path: string, value: unknown): void {
  const keys = path.split('.');
  let o = v;
  for (const k of keys.slice(0, -1)) {
    if (typeof o[k] !== 'object' || o[k] === null) o[k] = {};
    o = o[k] as Values;
  }
  o[keys[keys.length - 1]!] = value;
}

function textOf(spec: FieldSpec, value: unknown): string {
  if (value === undefined || value === null) return '';
  if (spec.kind === 'list' || spec.kind === 'numbers') return Array.isArray(value) ? value.join(', ') : String(value);
  if (spec.kind === 'context') return Array.isArray(value) ? (value as { var?: unknown; xid?: unknown }[]).map((c) => `${String(c.var)}=${String(c.xid)}`).join(', ') : '';
  if (spec.kind === 'tags') return typeof value === 'object' ? Object.entries(value as Values).map(([k, x]) => `${k}=${String(x)}`).join(', ') : '';
  if (spec.kind === 'states') return Array.isArray(value) ? (value as { key?: unknown; text?: unknown }[]).map((s) => `${String(s.key)}=${String(s.text)}`).join(', ') : '';
  if (spec.kind === 'recipients') return Array.isArray(value) ? value.map(recipientText).join(', ') : '';
  return String(value);
}

/**
 * An EMAIL recipient as typed: `user:name` a user (usernames hold no colon), else an entry with an @
 * an address, any other a username.
 */
function recipient(text: string): Values {
  if (text.startsWith('user:')) return { type: 'USER', username: text.slice(5) };
  return text.includes('@') ? { type: 'ADDRESS', address: text } : { type: 'USER', username: text };
}

function recipientText(r: Values): string {
  if (r.type === 'ADDRESS') return String(r.address ?? '');
  const name = String(r.username ?? '');
  return name.includes('@') ? `user:${name}` : name;
}

/** A control's text as the API value: numbers stay text when they are not numbers (the API names the field). */
function parse(spec: FieldSpec, text: string, checked: boolean): unknown {
  const t = text.trim();
  switch (spec.kind) {
    case 'checkbox':
      return checked;
    case 'number':
    case 'integer':
      return t === '' ? undefined : Number.isFinite(Number(t)) ? Number(t) : t;
    case 'list':
      return t === '' ? [] : t.split(',').map((s) => s.trim()).filter((s) => s !== '');
    case 'numbers':
      return t === '' ? undefined : t.split(',').map((s) => (Number.isFinite(Number(s.trim())) ? Number(s.trim()) : s.trim()));
    case 'tags':
      return Object.fromEntries(t === '' ? [] : t.split(',').map((pair) => pair.split('=').map((s) => s.trim())).map(([k, ...rest]) => [k ?? '', rest.join('=')]));
    case 'recipients':
      return t === '' ? [] : t.split(',').map((s) => s.trim()).filter((s) => s !== '').map(recipient);
    case 'context':
      return t === '' ? [] : t.split(',').map((pair) => pair.split('=').map((s) => s.trim())).map(([name, ...rest]) => ({ var: name ?? '', xid: rest.join('=') }));
    case 'states':
      return t === ''
        ? []
        : t.split(',').map((pair) => pair.split('=')).map(([key, ...rest]) => ({ key: Number.isFinite(Number(key?.trim())) && key?.trim() !== '' ? Number(key!.trim()) : (key ?? '').trim(), text: rest.join('=').trim() }));
    case 'script':
      return text;
    case 'scalar':
      return t === '' ? undefined : t === 'true' || t === 'false' ? t === 'true' : Number.isFinite(Number(t)) ? Number(t) : t;
    case 'select':
      return t === '' ? undefined : /^\d+$/.test(t) && spec.path === 'qos' ? Number(t) : t;
    default:
      return t === '' && spec.kind === 'password' ? undefined : t;
  }
}

/**
 * `context` adds values the conditions need but no control holds (the type of the chosen source);
 * `onChange` hears the path of each control the user changes.
 */
export function specForm(container: HTMLElement, specs: readonly FieldSpec[], onChange: (path: string) => void, context: (v: Values) => Values = () => ({})): SpecForm {
  const controls = new Map<string, HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>();
  const labels = new Map<string, HTMLElement>();
  const errors = new Map<string, HTMLElement>();

  function readAll(onlyShown: boolean): Values {
    const values: Values = {};
    for (const spec of specs) {
      const control = controls.get(keyOf(spec));
      if (!control || (onlyShown && labels.get(keyOf(spec))?.hidden)) continue;
      const value = parse(spec, control.value, control instanceof HTMLInputElement && control.checked);
      if (value !== undefined && !(spec.omitEmpty && value === '')) setPath(values, spec.path, value);
    }
    return values;
  }

  function setOptions(select: HTMLSelectElement, options: readonly string[], wanted: string, text: FieldSpec['optionText']): void {
    const current = options.includes(wanted) ? wanted : (options[0] ?? '');
    const same = select.options.length === options.length && options.every((o, i) => select.options[i]?.value === o);
    if (!same) select.replaceChildren(...options.map((o) => h('option', { value: o }, text?.[o] ?? o)));
    select.value = current;
  }

  function put(spec: FieldSpec, value: unknown): void {
    const control = controls.get(keyOf(spec));
    if (!control) return;
    if (control instanceof HTMLInputElement && control.type === 'checkbox') control.checked = value === true;
    else if (control instanceof HTMLSelectElement) setOptions(control, typeof spec.options === 'function' ? spec.options(readAll(false)) : (spec.options ?? []), textOf(spec, value), spec.optionText);
    else control.value = spec.kind === 'password' ? '' : textOf(spec, value);
  }

  const form: SpecForm = {
    render(values, editing) {
      controls.clear();
      labels.clear();
      errors.clear();
      const built: HTMLElement[] = [];
      for (const spec of specs) {
        const common = { name: keyOf(spec), 'data-path': spec.path, disabled: editing && spec.fixedOnEdit };
        const type = spec.kind === 'number' || spec.kind === 'integer' ? 'number' : spec.kind === 'password' ? 'password' : 'text';
        const control: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement =
          spec.kind === 'select'
            ? h('select', common)
            : spec.kind === 'script'
              ? h('textarea', { ...common, rows: '3', spellcheck: 'false', placeholder: spec.placeholder, class: 'script' })
            : spec.kind === 'checkbox'
              ? h('input', { ...common, type: 'checkbox' })
              : h('input', { ...common, type, step: spec.kind === 'integer' ? '1' : spec.kind === 'number' ? 'any' : undefined, placeholder: spec.placeholder, autocomplete: spec.kind === 'password' ? 'new-password' : undefined, list: spec.suggestions });
        control.addEventListener('change', () => {
          form.refresh();
          onChange(spec.path);
        });
        controls.set(keyOf(spec), control);
        const error = h('span', { class: 'field-error', 'data-error-for': spec.path, role: 'alert' });
        errors.set(keyOf(spec), error);
        const label = spec.kind === 'checkbox' ? h('label', {}, control, ` ${spec.label}`, error) : h('label', { title: spec.hint }, spec.label, control, error);
        labels.set(keyOf(spec), label);
        built.push(label);
      }
      container.replaceChildren(...built);
      form.fill(values, false);
    },
    fill(values, onlyEmpty) {
      for (const spec of specs) {
        const control = controls.get(keyOf(spec));
        const value = getPath(values, spec.path);
        if (!control) continue;
        // A default fills an empty box (or picks a choice); what the user typed stays.
        if (onlyEmpty && (value === undefined || (control instanceof HTMLInputElement && control.type !== 'checkbox' && control.value !== ''))) continue;
        put(spec, value);
      }
      form.refresh();
    },
    refresh() {
      // Twice: a choice that changes (changeType on dataType) may show or hide others.
      for (let pass = 0; pass < 2; pass++) {
        const all = { ...readAll(false), ...context(readAll(false)) };
        for (const spec of specs) {
          const label = labels.get(keyOf(spec));
          if (label) label.hidden = spec.when ? !spec.when(all) : false;
          const control = controls.get(keyOf(spec));
          if (control instanceof HTMLSelectElement && typeof spec.options === 'function') setOptions(control, spec.options(all), control.value, spec.optionText);
        }
      }
    },
    read() {
      return readAll(true);
    },
    showErrors(err) {
      for (const e of errors.values()) e.textContent = '';
      const unclaimed: string[] = [];
      const messages = err instanceof ApiError ? err.messages : [];
      // A path's shown control (of several with one path, the one whose condition holds).
      const shownKey = (path: string) => {
        const spec = specs.find((s) => s.path === path && labels.get(keyOf(s))?.hidden === false);
        return spec && keyOf(spec);
      };
      const hasPath = (path: string) => specs.some((s) => s.path === path);
      for (const m of messages) {
        // An item's message (pointLocator.context[1].var) goes next to the list's control, naming the item.
        const item = /^(.*?)(\[\d+\].*)$/.exec(m.property);
        const path = hasPath(m.property) || !item ? m.property : item[1]!;
        const text = path === m.property ? m.message : `${path.split('.').pop()!}${item![2]!}: ${m.message}`;
        const key = shownKey(path);
        const slot = key === undefined ? undefined : errors.get(key);
        if (slot) slot.textContent = (slot.textContent ? `${slot.textContent}; ` : '') + text;
        else unclaimed.push(`${m.property || '(body)'}: ${m.message}`);
      }
      return unclaimed;
    },
    clearErrors() {
      for (const e of errors.values()) e.textContent = '';
    },
  };
  return form;
}
