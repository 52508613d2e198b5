// Setting a point's value from the points list (PUT /point-values/<xid>): a small form whose
// control fits the point's data type. A refusal lists its field messages; a device failure says so.
import { put, seg, type DataPoint, type PointValue, type User } from './api.js';
import { byId, h, say, sayRefused } from './dom.js';
import { maySetPoint } from './may.js';

export interface SetValue {
  open(point: DataPoint): void;
}

/** Whether the user may set the point (may.ts maySetPoint: settable, read and set permission). */
export function canSet(user: User | undefined, p: DataPoint): boolean {
  return maySetPoint(user, p);
}

/** The states a multistate point names in its locator (virtual points), if any. */
function statesOf(p: DataPoint): number[] {
  const values = p.pointLocator.values;
  return Array.isArray(values) ? values.filter((v): v is number => Number.isInteger(v)) : [];
}

/** The control for the point's data type, showing the current value when there is one. */
function control(p: DataPoint, current: string | undefined): HTMLInputElement | HTMLSelectElement {
  const states = statesOf(p);
  let el: HTMLInputElement | HTMLSelectElement;
  if (p.pointLocator.dataType === 'BINARY') {
    el = h('select', { name: 'value' }, h('option', { value: 'true' }, 'on (true)'), h('option', { value: 'false' }, 'off (false)'));
  } else if (p.pointLocator.dataType === 'MULTISTATE' && states.length > 0) {
    el = h('select', { name: 'value' }, ...states.map((v) => h('option', { value: String(v) }, String(v))));
  } else if (p.pointLocator.dataType === 'NUMERIC' || p.pointLocator.dataType === 'MULTISTATE') {
    el = h('input', { name: 'value', type: 'number', step: p.pointLocator.dataType === 'NUMERIC' ? 'any' : '1', required: true });
  } else {
    el = h('input', { name: 'value', type: 'text' });
  }
  if (current !== undefined && current !== 'null') {
    el.value = current;
    // A select without that option shows its first one rather than nothing.
    if (el instanceof HTMLSelectElement && el.selectedIndex < 0) el.selectedIndex = 0;
  }
  return el;
}

function valueOf(p: DataPoint, raw: string): unknown {
  if (p.pointLocator.dataType === 'BINARY') return raw === 'true';
  if (p.pointLocator.dataType === 'NUMERIC' || p.pointLocator.dataType === 'MULTISTATE') return raw.trim() === '' ? raw : Number(raw);
  return raw;
}

/**
 * `written` hears each value the service stored; `current` gives the value shown for a point (as
 * text), which the form starts from.
 */
export function setValuePanel(written: (xid: string, v: PointValue) => void, current: (xid: string) => string | undefined = () => undefined): SetValue {
  const panel = byId('set-panel');
  const form = byId<HTMLFormElement>('set-form');
  const slot = byId('set-control');
  const status = byId('set-status');
  const messages = byId('set-messages');
  let point: DataPoint | undefined;

  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const p = point;
    if (!p) return;
    const raw = (form.elements.namedItem('value') as HTMLInputElement | HTMLSelectElement).value;
    const button = form.querySelector<HTMLButtonElement>('button[type="submit"]');
    if (button) button.disabled = true;
    say(status, 'Writing…');
    messages.replaceChildren();
    put<PointValue & { xid: string }>(`/point-values/${seg(p.xid)}`, { dataType: p.pointLocator.dataType, value: valueOf(p, raw) })
      .then((v) => {
        say(status, `Set ${p.name} to ${String(v.value)}${p.unit ? ` ${p.unit}` : ''}`, 'ok');
        written(p.xid, v);
      })
      .catch((err: unknown) => sayRefused(status, messages, err, `${p.name} was not set`))
      .finally(() => {
        if (button) button.disabled = false;
      });
  });
  byId('set-close').addEventListener('click', () => {
    panel.hidden = true;
    point = undefined;
  });

  return {
    open(p) {
      point = p;
      byId('set-point').textContent = `${p.name} (${p.xid})`;
      const input = control(p, current(p.xid));
      slot.replaceChildren(h('label', {}, `New value${p.unit ? ` (${p.unit})` : ''}`, input));
      say(status, '');
      messages.replaceChildren();
      panel.hidden = false;
      panel.scrollIntoView({ block: 'nearest' });
      input.focus();
    },
  };
}
