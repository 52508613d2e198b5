// A search box that suggests points as one types: by name, XID, device or any tag value (one RQL
// query: or(match(name,*text*), match(xid,…), match(deviceName,…), match(tags.<key>,…) …)). It is an
// ARIA combobox: ↓/↑ move through the suggestions, Enter picks, Escape closes; a click picks too.
import { get, type DataPoint, type List } from './api.js';
import { h } from './dom.js';

/** A point as the list answers, with its tags (the list carries them). */
export type FoundPoint = DataPoint & { tags?: Record<string, string> };

const SHOWN = 10;
const DEBOUNCE_MS = 150;
/** Tag keys searched at most (one match() each); implicit name and device are searched anyway. */
const MAX_TAG_KEYS = 20;

/** Text as an RQL value: percent-encoded, parentheses and commas included; * and ? stay wildcards. */
function rqlText(text: string): string {
  return encodeURIComponent(text).replace(/[()!']/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

export function searchQuery(text: string, tagKeys: string[]): string {
  const pattern = `*${rqlText(text)}*`;
  const properties = ['name', 'xid', 'deviceName', ...tagKeys.map((k) => `tags.${k}`)];
  return `or(${properties.map((p) => `match(${p},${pattern})`).join(',')})&sort(name)&limit(${SHOWN})`;
}

export interface PointSearch {
  /** Empties the box and closes the suggestions. */
  clear(): void;
}

export interface PointSearchOptions {
  onPick(point: FoundPoint): void;
  onError(err: unknown): void;
  /** Points already chosen are marked as such in the suggestions. */
  isChosen?(xid: string): boolean;
}

export function pointSearch(input: HTMLInputElement, listbox: HTMLUListElement, options: PointSearchOptions): PointSearch {
  const { onPick, onError } = options;
  let found: FoundPoint[] = [];
  let active = -1;
  let timer: number | undefined;
  let asked = 0;
  let tagKeys: Promise<string[]> | undefined;

  function keys(): Promise<string[]> {
    tagKeys ??= get<string[]>('/data-point-tags/keys')
      .then((all) => all.filter((k) => k !== 'name' && k !== 'device' && /^[A-Za-z0-9_-]+$/.test(k)).slice(0, MAX_TAG_KEYS))
      .catch(() => []);
    return tagKeys;
  }

  function close(): void {
    found = [];
    active = -1;
    listbox.replaceChildren();
    listbox.hidden = true;
    input.setAttribute('aria-expanded', 'false');
    input.removeAttribute('aria-activedescendant');
  }

  function matchingTags(p: FoundPoint, text: string): string[] {
    const lower = text.toLowerCase();
    return Object.entries(p.tags ?? {})
      .filter(([, v]) => v.toLowerCase().includes(lower))
      .map(([k, v]) => `${k}: ${v}`);
  }

  function render(text: string): void {
    listbox.replaceChildren(
      ...found.map((p, i) => {
        const details = [options.isChosen?.(p.xid) ? 'on the trend' : '', p.deviceName, p.xid, p.unit, ...matchingTags(p, text)].filter((d) => d);
        const option = h(
          'li',
          { id: `${listbox.id}-${i}`, role: 'option', 'aria-selected': i === active ? 'true' : 'false', 'data-xid': p.xid },
          h('span', { class: 'found-name' }, p.name),
          h('span', { class: 'found-details' }, details.join(' · ')),
        );
        // mousedown, not click: the box keeps the focus, so the list is still there when the click lands.
        option.addEventListener('mousedown', (ev) => {
          ev.preventDefault();
          pick(i);
        });
        return option;
      }),
    );
    if (found.length === 0) listbox.append(h('li', { class: 'muted', role: 'presentation' }, 'No point matches'));
    listbox.hidden = false;
    input.setAttribute('aria-expanded', 'true');
    if (active >= 0) input.setAttribute('aria-activedescendant', `${listbox.id}-${active}`);
    else input.removeAttribute('aria-activedescendant');
  }

  async function search(text: string): Promise<void> {
    const ask = ++asked;
    try {
      const list = await get<List<FoundPoint>>(`/data-points?${searchQuery(text, await keys())}`);
      if (ask !== asked) return;
      found = list.items;
      active = found.length > 0 ? 0 : -1;
      render(text);
    } catch (err) {
      if (ask === asked) onError(err);
    }
  }

  function pick(i: number): void {
    const p = found[i];
    if (!p) return;
    input.value = '';
    close();
    onPick(p);
  }

  function move(by: number): void {
    if (found.length === 0) return;
    active = (active + by + found.length) % found.length;
    render(input.value.trim());
    document.getElementById(`${listbox.id}-${active}`)?.scrollIntoView({ block: 'nearest' });
  }

  input.addEventListener('input', () => {
    window.clearTimeout(timer);
    const text = input.value.trim();
    if (text === '') {
      asked++;
      close();
      return;
    }
    timer = window.setTimeout(() => void search(text), DEBOUNCE_MS);
  });
  input.addEventListener('keydown', (ev) => {
    if (ev.key === 'ArrowDown' || ev.key === 'ArrowUp') {
      ev.preventDefault();
      if (listbox.hidden && input.value.trim() !== '') void search(input.value.trim());
      else move(ev.key === 'ArrowDown' ? 1 : -1);
    } else if (ev.key === 'Enter') {
      ev.preventDefault();
      if (!listbox.hidden && active >= 0) pick(active);
    } else if (ev.key === 'Escape' && !listbox.hidden) {
      ev.preventDefault();
      close();
    }
  });
  input.addEventListener('blur', () => close());

  return {
    clear() {
      asked++;
      window.clearTimeout(timer);
      input.value = '';
      close();
    },
  };
}
