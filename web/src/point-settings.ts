// A point's logging and retention settings (API-DECISIONS "Logging, retention, configuration"): the
// form opens from a point row, shows what is stored, and saves the whole point back with PUT.
import { get, put, seg, type DataPoint } from './api.js';
import { byId, field, say, sayError, sayRefused, showMessages } from './dom.js';

/** ±Number.MAX_VALUE mean "no limit": the form shows them as empty boxes. */
const NO_LIMIT = Number.MAX_VALUE;

export interface PointSettings {
  /** `editable`: the user may change the point (may.ts mayEditPoint); otherwise the settings are only shown. */
  open(xid: string, editable?: boolean): Promise<void>;
}

export function pointSettings(saved: () => void): PointSettings {
  const panel = byId('settings-panel');
  const form = byId<HTMLFormElement>('settings-form');
  const status = byId('settings-status');
  const messages = byId('settings-messages');
  let point: DataPoint | undefined;

  const control = (name: string) => form.elements.namedItem(name) as HTMLInputElement | HTMLSelectElement;
  const set = (name: string, value: string | number) => (control(name).value = String(value));
  const check = (name: string, on: boolean) => ((control(name) as HTMLInputElement).checked = on);

  function fill(p: DataPoint): void {
    const l = p.loggingProperties;
    byId('settings-point').textContent = `${p.name} (${p.xid})`;
    set('loggingType', l.loggingType);
    set('tolerance', l.tolerance);
    set('intervalPeriods', l.intervalLoggingPeriod.periods);
    set('intervalPeriodType', l.intervalLoggingPeriod.type);
    set('intervalLoggingType', l.intervalLoggingType);
    check('discardExtremeValues', l.discardExtremeValues);
    set('discardLowLimit', l.discardLowLimit <= -NO_LIMIT ? '' : l.discardLowLimit);
    set('discardHighLimit', l.discardHighLimit >= NO_LIMIT ? '' : l.discardHighLimit);
    check('purgeOverride', p.purgeOverride);
    set('purgePeriods', p.purgePeriod.periods);
    set('purgePeriodType', p.purgePeriod.type);
    showOnly();
  }

  /** Only the fields the chosen logging type and switches use are shown. */
  function showOnly(): void {
    const type = field(form, 'loggingType');
    for (const el of form.querySelectorAll<HTMLElement>('[data-when]')) {
      const when = el.dataset.when!;
      el.hidden = when === 'discard' ? field(form, 'discardExtremeValues') !== 'true' : when === 'purge' ? field(form, 'purgeOverride') !== 'true' : when !== type;
    }
  }

  /** A number box: empty means the given default (no limit); anything else goes as typed, for the service to judge. */
  const num = (name: string, empty: number) => (field(form, name).trim() === '' ? empty : Number(field(form, name)));

  function body(p: DataPoint): Record<string, unknown> {
    return {
      ...p,
      loggingProperties: {
        loggingType: field(form, 'loggingType'),
        tolerance: num('tolerance', 0),
        intervalLoggingPeriod: { periods: num('intervalPeriods', 1), type: field(form, 'intervalPeriodType') },
        intervalLoggingType: field(form, 'intervalLoggingType'),
        discardExtremeValues: field(form, 'discardExtremeValues') === 'true',
        discardLowLimit: num('discardLowLimit', -NO_LIMIT),
        discardHighLimit: num('discardHighLimit', NO_LIMIT),
      },
      purgeOverride: field(form, 'purgeOverride') === 'true',
      purgePeriod: { periods: num('purgePeriods', 1), type: field(form, 'purgePeriodType') },
    };
  }

  form.addEventListener('change', showOnly);
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    if (!point) return;
    const p = point;
    void (async () => {
      try {
        point = await put<DataPoint>(`/data-points/${seg(p.xid)}`, body(p));
        fill(point);
        showMessages(messages, undefined);
        say(status, `Saved the settings of ${point.name}`, 'ok');
        saved();
      } catch (err) {
        sayRefused(status, messages, err, 'Not saved');
      }
    })();
  });
  byId('settings-close').addEventListener('click', () => (panel.hidden = true));

  return {
    async open(xid, editable = true) {
      say(status, editable ? '' : 'Read only: you may not change the settings of this point');
      showMessages(messages, undefined);
      for (const el of form.elements) if (el instanceof HTMLInputElement || el instanceof HTMLSelectElement) el.disabled = !editable;
      form.querySelector<HTMLButtonElement>('button[type="submit"]')!.hidden = !editable;
      try {
        point = await get<DataPoint>(`/data-points/${seg(xid)}`);
        fill(point);
        panel.hidden = false;
        if (editable) (control('loggingType') as HTMLSelectElement).focus();
      } catch (err) {
        panel.hidden = false;
        sayError(status, err);
      }
    },
  };
}
