// The computed (META) point's context picker, beside the point form: find a point by name, give it a
// variable name (suggested from the point's name) and add it to the context; each context entry is
// listed by its point's name with buttons that put its variable into the script at the cursor or
// remove it. The form's context field stays the one place the context is kept: the picker reads and
// writes it through the editor (so typing `var=xid` pairs by hand still works).
import { get, type DataPoint, type List } from './api.js';
import { byId, h, say } from './dom.js';

export interface ContextEntry {
  var: string;
  xid: string;
}

export interface MetaContextPicker {
  /** Shows the picker for a point of a META source (its own XID left out of the choices); hides it otherwise. */
  show(meta: boolean, ownXid: string | undefined): Promise<void>;
  /** Lists the context as the form now holds it (after the field changed). */
  refresh(): void;
}

export interface ContextBinding {
  read(): ContextEntry[];
  write(entries: ContextEntry[]): void;
  /** The script's text box, where a variable is inserted. */
  script(): HTMLTextAreaElement | null;
}

const RESERVED = new Set(['true', 'false', 'abs', 'sign', 'round', 'floor', 'ceil', 'trunc', 'sqrt', 'cbrt', 'exp', 'log', 'log10', 'log2', 'sin', 'cos', 'tan', 'asin', 'acos', 'atan', 'atan2', 'pow', 'hypot', 'min', 'max', 'clamp', 'avg', 'last', 'delta']);

/** "Boiler 2 – flow temp" → "boiler_2_flow_temp": a name the script accepts, unique in the context. */
export function variableName(pointName: string, taken: ReadonlySet<string>): string {
  let base = pointName.toLowerCase().normalize('NFKD').replace(/[^a-z0-9_]+/g, '_').replace(/^_+|_+$/g, '').slice(0, 60);
  if (base === '' || /^\d/.test(base)) base = `p_${base}`.replace(/_$/, '');
  if (RESERVED.has(base)) base = `${base}_`;
  let name = base;
  for (let n = 2; taken.has(name); n++) name = `${base}${n}`;
  return name;
}

export function metaContextPicker(binding: ContextBinding): MetaContextPicker {
  const box = byId('point-editor-context');
  const find = h('input', { type: 'search', placeholder: 'name, device or XID', 'aria-label': 'Find a context point' });
  const choice = h('select', { 'aria-label': 'Point to add to the context' });
  const variable = h('input', { size: '14', 'aria-label': 'Variable name for it' });
  const add = h('button', { type: 'button' }, 'Add to context');
  const status = h('span', { class: 'status', role: 'status' });
  const list = h('ul', { class: 'node-list', 'aria-label': 'Points in the context' });
  let points: DataPoint[] = [];
  let own: string | undefined;
  // The variable box follows the chosen point until the user types a name of their own.
  let typed = false;

  box.replaceChildren(
    h(
      'fieldset',
      {},
      h('legend', {}, 'Pick context points by name'),
      h('div', { class: 'row' }, h('label', {}, 'Find', find), h('label', {}, 'Point', choice), h('label', {}, 'Variable', variable), add, status),
      list,
    ),
  );

  const label = (p: DataPoint) => `${p.name}${p.deviceName && p.deviceName !== p.name ? ` · ${p.deviceName}` : ''} (${p.xid})`;

  function suggest(): void {
    if (typed) return;
    const p = points.find((x) => x.xid === choice.value);
    variable.value = p ? variableName(p.name, new Set(binding.read().map((c) => c.var))) : '';
  }

  function fillChoices(): void {
    const words = find.value.trim().toLowerCase().split(/\s+/).filter((w) => w !== '');
    const used = new Set(binding.read().map((c) => c.xid));
    const shown = points.filter((p) => p.xid !== own && !used.has(p.xid) && words.every((w) => label(p).toLowerCase().includes(w)));
    choice.replaceChildren(...shown.map((p) => h('option', { value: p.xid }, label(p))));
    add.disabled = shown.length === 0;
    suggest();
  }

  function insert(name: string): void {
    const script = binding.script();
    if (!script) return;
    const at = script.selectionStart ?? script.value.length;
    script.value = `${script.value.slice(0, at)}${name}${script.value.slice(script.selectionEnd ?? at)}`;
    script.focus();
    script.setSelectionRange(at + name.length, at + name.length);
  }

  function refresh(): void {
    const entries = binding.read();
    list.replaceChildren(
      ...entries.map((c) => {
        const p = points.find((x) => x.xid === c.xid);
        return h(
          'li',
          { 'data-var': c.var },
          h('code', {}, c.var),
          ` = ${p ? label(p) : `${c.xid} (no such point)`} `,
          h('button', { type: 'button', onclick: () => insert(c.var) }, `Insert ${c.var}`, h('span', { class: 'sr-only' }, ' into the script')),
          ' ',
          h('button', { type: 'button', onclick: () => remove(c.var) }, 'Remove', h('span', { class: 'sr-only' }, ` ${c.var} from the context`)),
        );
      }),
    );
    fillChoices();
  }

  function remove(name: string): void {
    binding.write(binding.read().filter((c) => c.var !== name));
    refresh();
  }

  find.addEventListener('input', fillChoices);
  choice.addEventListener('change', suggest);
  variable.addEventListener('input', () => (typed = variable.value.trim() !== ''));
  add.addEventListener('click', () => {
    const p = points.find((x) => x.xid === choice.value);
    const name = variable.value.trim();
    const entries = binding.read();
    if (!p || name === '') {
      say(status, 'Choose a point and name its variable', 'error');
      return;
    }
    if (entries.some((c) => c.var === name)) {
      say(status, `${name} is bound already`, 'error');
      return;
    }
    binding.write([...entries, { var: name, xid: p.xid }]);
    typed = false;
    find.value = '';
    say(status, `${name} = ${p.name}`, 'ok');
    refresh();
  });

  return {
    async show(meta, ownXid) {
      box.hidden = !meta;
      if (!meta) return;
      own = ownXid;
      find.value = '';
      typed = false;
      say(status, '');
      try {
        points = (await get<List<DataPoint>>('/data-points?sort(name)&limit(1000)')).items;
      } catch (err) {
        say(status, `Points not loaded: ${err instanceof Error ? err.message : String(err)}`, 'error');
      }
      refresh();
    },
    refresh,
  };
}
