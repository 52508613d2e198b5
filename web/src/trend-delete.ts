// Deleting values from a point's history, from the trend: a range (prefilled with the range shown, so
// zooming onto a bad value and pressing Delete selects it) or one value of the list of values in that
// range. Nothing goes without a confirmation naming the point, how many values and the range; then
// DELETE /point-values/<xid>?from&to ([from, to)) and the chart reloads.
import { del, get, seg, type PointValue } from './api.js';
import { byId, field, formatTime, h, say, sayError } from './dom.js';

export interface DeletablePoint {
  xid: string;
  name: string;
}

export interface DeletePanel {
  /** Opens the panel for these points over this range [from, to) ms. */
  open(points: DeletablePoint[], from: number, to: number): void;
  close(): void;
}

/** Values listed one per row (with a Delete button each) when the range holds no more. */
const LIST_UP_TO = 50;

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** ms → the value of a datetime-local input with seconds, in the browser's zone. */
export function localInput(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

function formatValue(v: PointValue['value']): string {
  return v === null ? '(none)' : typeof v === 'number' ? String(Number(v.toPrecision(10))) : String(v);
}

export function deletePanel(onDeleted: () => void): DeletePanel {
  const panel = byId('trend-delete-panel');
  const form = byId<HTMLFormElement>('trend-delete-form');
  const pointSelect = form.elements.namedItem('xid') as HTMLSelectElement;
  const status = byId('trend-delete-status');
  const listEl = byId('trend-delete-values');
  const dialog = byId<HTMLDialogElement>('trend-delete-confirm');
  const question = byId('trend-delete-question');
  const confirmButton = byId<HTMLButtonElement>('trend-delete-yes');
  let points: DeletablePoint[] = [];

  const nameOf = (xid: string) => points.find((p) => p.xid === xid)?.name ?? xid;

  function readRange(): { xid: string; from: number; to: number } {
    const xid = field(form, 'xid');
    const from = new Date(field(form, 'from')).getTime();
    const to = new Date(field(form, 'to')).getTime();
    if (!xid) throw new Error('Choose the point to delete values from');
    if (!Number.isFinite(from) || !Number.isFinite(to)) throw new Error('Enter both times of the range');
    if (from >= to) throw new Error('The start of the range must be before its end');
    return { xid, from, to };
  }

  async function countValues(xid: string, from: number, to: number): Promise<number> {
    const result = await get<PointValue[]>(`/point-values/single/${seg(xid)}?from=${from}&to=${to}&rollup=COUNT`);
    return Number(result[0]?.value ?? 0);
  }

  /** Asks in a modal dialog; resolves true only on the explicit Delete button. */
  function confirm(text: string, count: number): Promise<boolean> {
    question.textContent = text;
    confirmButton.textContent = `Delete ${count === 1 ? 'the value' : `${count} values`}`;
    dialog.returnValue = '';
    dialog.showModal();
    // Cancel has the focus first: Enter on a dialog that just opened deletes nothing.
    byId('trend-delete-no').focus();
    return new Promise((resolve) => dialog.addEventListener('close', () => resolve(dialog.returnValue === 'delete'), { once: true }));
  }

  async function deleteRange(xid: string, from: number, to: number, what: string): Promise<void> {
    say(status, 'Counting the values…');
    const count = await countValues(xid, from, to);
    const name = nameOf(xid);
    if (count === 0) {
      say(status, `No values of ${name} ${what}: nothing to delete`);
      return;
    }
    const text = `Delete ${count === 1 ? '1 value' : `${count} values`} of ${name} (${xid}) ${what}? This cannot be undone.`;
    say(status, 'Waiting for the confirmation…');
    if (!(await confirm(text, count))) {
      say(status, 'Nothing deleted');
      return;
    }
    const result = await del<{ deleted: number }>(`/point-values/${seg(xid)}?from=${from}&to=${to}`);
    say(status, `Deleted ${result.deleted === 1 ? '1 value' : `${result.deleted} values`} of ${name} ${what}`, 'ok');
    listEl.replaceChildren();
    onDeleted();
  }

  async function listValues(): Promise<void> {
    const { xid, from, to } = readRange();
    const values = await get<PointValue[]>(`/point-values/single/${seg(xid)}?from=${from}&to=${to}&limit=${LIST_UP_TO + 1}`);
    if (values.length > LIST_UP_TO) {
      listEl.replaceChildren();
      say(status, `More than ${LIST_UP_TO} values in this range: narrow it (zoom in on the chart) to list them`);
      return;
    }
    say(status, values.length === 0 ? `No values of ${nameOf(xid)} in this range` : `${values.length} ${values.length === 1 ? 'value' : 'values'} of ${nameOf(xid)}`);
    listEl.replaceChildren(
      ...values.map((v) =>
        h(
          'li',
          {},
          h('span', {}, `${formatTime(v.timestamp)}: `, h('strong', {}, formatValue(v.value))),
          ' ',
          h(
            'button',
            {
              type: 'button',
              'aria-label': `Delete the value ${formatValue(v.value)} of ${formatTime(v.timestamp)}`,
              onclick: () => void deleteRange(xid, v.timestamp, v.timestamp + 1, `at ${formatTime(v.timestamp)} (value ${formatValue(v.value)})`).catch((err: unknown) => sayError(status, err)),
            },
            'Delete',
          ),
        ),
      ),
    );
  }

  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    let range: { xid: string; from: number; to: number };
    try {
      range = readRange();
    } catch (err) {
      sayError(status, err);
      return;
    }
    void deleteRange(range.xid, range.from, range.to, `from ${formatTime(range.from)} to ${formatTime(range.to)}`).catch((err: unknown) => sayError(status, err));
  });
  byId('trend-delete-list').addEventListener('click', () => void listValues().catch((err: unknown) => sayError(status, err)));
  byId('trend-delete-close').addEventListener('click', () => api.close());
  form.addEventListener('change', () => listEl.replaceChildren());

  const api: DeletePanel = {
    open(shown, from, to) {
      points = shown;
      const before = pointSelect.value;
      pointSelect.replaceChildren(...shown.map((p) => h('option', { value: p.xid }, `${p.name} (${p.xid})`)));
      if (shown.some((p) => p.xid === before)) pointSelect.value = before;
      // Whole seconds that include the range shown (the inputs have seconds, not milliseconds).
      (form.elements.namedItem('from') as HTMLInputElement).value = localInput(Math.floor(from / 1000) * 1000);
      (form.elements.namedItem('to') as HTMLInputElement).value = localInput(Math.ceil(to / 1000) * 1000);
      listEl.replaceChildren();
      say(status, '');
      panel.hidden = false;
      pointSelect.focus();
    },
    close() {
      panel.hidden = true;
      listEl.replaceChildren();
    },
  };
  return api;
}
