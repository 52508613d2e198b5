// Many alarms acknowledged with one click and one comment (a chattering limit raises a CRITICAL a
// minute): a checkbox on each alarm that can be acknowledged, "Select all shown", and a form that
// acknowledges the selection (alarm-acknowledge.ts). Only what is shown can be selected: when the
// filter hides an alarm it leaves the selection, so nobody acknowledges what they cannot see.
import { acknowledgeAlarms } from './alarm-acknowledge.js';
import type { AlarmEvent } from './api.js';
import { byId, h, say } from './dom.js';

const alarms = (n: number) => (n === 1 ? '1 alarm' : `${n} alarms`);

export interface AlarmSelection {
  /** The row's checkbox, ticked when the alarm is selected. */
  checkbox(event: AlarmEvent): HTMLInputElement;
  /** After each render: the shown alarms that can be acknowledged (the rest leave the selection). */
  shown(selectable: readonly AlarmEvent[]): void;
  clear(): void;
}

export interface SelectionHooks {
  /** An answer's state of an alarm, for the list. */
  learned(event: AlarmEvent): void;
  /** A run ended: the list reloads (the bulk form answers with a count only). */
  finished(): Promise<void>;
}

export function alarmSelection(hooks: SelectionHooks): AlarmSelection {
  const form = byId<HTMLFormElement>('alarms-bulk');
  const all = form.elements.namedItem('all') as HTMLInputElement;
  const comment = form.elements.namedItem('comment') as HTMLInputElement;
  const submit = form.querySelector<HTMLButtonElement>('button[type="submit"]')!;
  const counter = byId('alarms-selected');
  const status = byId('alarms-bulk-status');
  const selected = new Set<number>();
  let selectable: readonly AlarmEvent[] = [];
  let busy = false;

  const boxes = () => document.querySelectorAll<HTMLInputElement>('#alarms-table input[data-select-alarm]');

  function update(): void {
    const n = selected.size;
    for (const box of boxes()) box.disabled = busy;
    all.checked = n > 0 && n === selectable.length;
    all.indeterminate = n > 0 && n < selectable.length;
    all.disabled = busy || selectable.length === 0;
    submit.disabled = busy || n === 0;
    counter.textContent = selectable.length === 0 ? '' : `${n} of ${selectable.length} selected`;
    form.dataset.selected = String(n);
  }

  all.addEventListener('change', () => {
    for (const e of selectable) {
      if (all.checked) selected.add(e.id);
      else selected.delete(e.id);
    }
    for (const box of boxes()) {
      box.checked = selected.has(Number(box.dataset.selectAlarm));
    }
    update();
  });

  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void run();
  });

  async function run(): Promise<void> {
    const ids = selectable.filter((e) => selected.has(e.id)).map((e) => e.id);
    if (ids.length === 0 || busy) return;
    const text = comment.value;
    const withComment = text.trim() !== '';
    busy = true;
    update();
    say(status, `Acknowledging ${alarms(ids.length)}…`);
    try {
      const outcome = await acknowledgeAlarms(ids, text, {
        acknowledged: hooks.learned,
        progress: (answered) => say(status, `Acknowledging ${alarms(ids.length)}: ${answered} done…`),
      });
      const failedIds = new Set(outcome.failed.map((f) => f.id));
      for (const id of ids) if (!failedIds.has(id)) selected.delete(id);
      if (outcome.failed.length === 0) {
        comment.value = '';
        say(status, `${alarms(ids.length)} acknowledged${withComment ? ' with your comment' : ''}`, 'ok');
      } else {
        // The ones that failed stay selected, to try again; the first reasons are named.
        const reasons = outcome.failed.slice(0, 3).map((f) => `alarm ${f.id}: ${f.message}`).join('; ');
        say(status, `${ids.length - outcome.failed.length} of ${alarms(ids.length)} acknowledged; ${outcome.failed.length} refused (${reasons}${outcome.failed.length > 3 ? '; …' : ''})`, 'error');
      }
    } finally {
      busy = false;
      update();
      await hooks.finished();
    }
  }

  return {
    checkbox(event) {
      const box: HTMLInputElement = h('input', { type: 'checkbox', 'data-select-alarm': event.id, 'aria-label': `Select alarm ${event.id}: ${event.message}` });
      box.checked = selected.has(event.id);
      box.disabled = busy;
      box.addEventListener('change', () => {
        if (box.checked) selected.add(event.id);
        else selected.delete(event.id);
        update();
      });
      return box;
    },
    shown(now) {
      selectable = now;
      const ids = new Set(now.map((e) => e.id));
      for (const id of selected) if (!ids.has(id)) selected.delete(id);
      update();
    },
    clear() {
      selected.clear();
      comment.value = '';
      say(status, '');
      update();
    },
  };
}
