// Setting a point's value from the points list (PUT /point-values/<xid>): a small form whose
// control fits the point's data type. A refusal lists its field messages; a device failure says so.
import { put, seg, type DataPoint, type PointValue, type User } from './api.js';
import { byId, h, say, sayRefused } from './dom.js';

export interface SetValue {
  open(point: DataPoint): void;
}

/** Whether the user may set the point: settable, and superadmin or one of its set roles. */
export function canSet(user: User | undefined, p: DataPoint): boolean {
  if (!user || !p.pointLocator.settable) return false;
  if (user.permissions.includes('superadmin')) return true;
  const roles = new Set(['user', ...user.permissions]);
  return (p.setPermission ?? []).some((r) => roles.has(r));
}

function control(p: DataPoint): HTMLInputElement | HTMLSelectElement {
  switch (p.pointLocator.dataType) {
    case 'BINARY':
      return h('select', { name: 'value' }, h('option', { value: 'true' }, 'on (true)'), h('option', { value: 'false' }, 'off (false)'));
    case 'NUMERIC':
      return h('input', { name: 'value', type: 'number', step: 'any', required: true });
    case 'MULTISTATE':
      return h('input', { name: 'value', type: 'number', step: '1', required: true });
    default:
      return h('input', { name: 'value', type: 'text' });
  }
}

function valueOf(p: DataPoint, raw: string): unknown {
  if (p.pointLocator.dataType === 'BINARY') return raw === 'true';
  if (p.pointLocator.dataType === 'NUMERIC' || p.pointLocator.dataType === 'MULTISTATE') return raw.trim() === '' ? raw : Number(raw);
  return raw;
}

export function setValuePanel(written: (xid: string, v: PointValue) => void): SetValue {
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
      const input = control(p);
      slot.replaceChildren(h('label', {}, `New value${p.unit ? ` (${p.unit})` : ''}`, input));
      say(status, '');
      messages.replaceChildren();
      panel.hidden = false;
      input.focus();
    },
  };
}
