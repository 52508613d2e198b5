// Create and edit data sources of every type, their points with every locator field, and a point's
// event detectors (API-DECISIONS "Data sources and points"). Each editor is a spec form (spec-form.ts)
// in a panel: the fields shown follow the source type and data type; Save POSTs a new resource or
// PUTs the whole edited one (fields the form does not show are kept from the stored resource); a
// refusal puts each field message next to its field.
import { del, get, post, put, seg, type DataPoint, type DataSource, type List } from './api.js';
import { byId, h, say, sayError } from './dom.js';
import { specForm, type FieldSpec, type SpecForm, type Values } from './spec-form.js';

const DATA_TYPES = ['NUMERIC', 'BINARY', 'MULTISTATE', 'ALPHANUMERIC'];
const PERIOD_TYPES = ['MILLISECONDS', 'SECONDS', 'MINUTES', 'HOURS'];
const CHANGE_TYPES: Record<string, string[]> = {
  NUMERIC: ['RANDOM_WALK', 'SINE', 'INCREMENT', 'RANDOM', 'NO_CHANGE'],
  BINARY: ['ALTERNATE', 'RANDOM', 'NO_CHANGE'],
  MULTISTATE: ['INCREMENT', 'RANDOM', 'NO_CHANGE'],
  ALPHANUMERIC: ['NO_CHANGE'],
};
const ALARM_LEVELS = ['NONE', 'INFORMATION', 'IMPORTANT', 'WARNING', 'URGENT', 'CRITICAL', 'LIFE_SAFETY'];
const DETECTOR_TYPES = ['HIGH_LIMIT', 'LOW_LIMIT', 'RANGE', 'BINARY_STATE', 'MULTISTATE_STATE', 'NO_UPDATE'];

const is = (path: string, ...values: string[]) => (v: Values) => values.includes(String(locatorOr(v, path)));
function locatorOr(v: Values, path: string): unknown {
  return path.startsWith('pointLocator.') ? (v.pointLocator as Values | undefined)?.[path.slice(13)] : v[path];
}

const SOURCE_FIELDS: FieldSpec[] = [
  { path: 'modelType', label: 'Type', kind: 'select', options: ['VIRTUAL', 'MODBUS_IP', 'MQTT_CLIENT'], fixedOnEdit: true },
  { path: 'name', label: 'Name', kind: 'text' },
  { path: 'xid', label: 'XID (empty: generated)', kind: 'text', fixedOnEdit: true, omitEmpty: true },
  { path: 'enabled', label: 'Enabled', kind: 'checkbox' },
  { path: 'updatePeriods', label: 'Update period', kind: 'integer', when: (v) => v.modelType !== 'MQTT_CLIENT' },
  { path: 'updatePeriodType', label: 'Period unit', kind: 'select', options: PERIOD_TYPES, when: (v) => v.modelType !== 'MQTT_CLIENT' },
  { path: 'host', label: 'Host', kind: 'text', when: is('modelType', 'MODBUS_IP') },
  { path: 'port', label: 'Port', kind: 'integer', when: is('modelType', 'MODBUS_IP') },
  { path: 'unitId', label: 'Unit id', kind: 'integer', when: is('modelType', 'MODBUS_IP') },
  { path: 'timeoutMs', label: 'Timeout (ms)', kind: 'integer', when: is('modelType', 'MODBUS_IP') },
  { path: 'retries', label: 'Retries', kind: 'integer', when: is('modelType', 'MODBUS_IP') },
  { path: 'brokerUrl', label: 'Broker URL', kind: 'text', placeholder: 'mqtt://host:1883', when: is('modelType', 'MQTT_CLIENT') },
  { path: 'clientId', label: 'Client id (empty: generated)', kind: 'text', when: is('modelType', 'MQTT_CLIENT') },
  { path: 'username', label: 'Broker login', kind: 'text', when: is('modelType', 'MQTT_CLIENT') },
  { path: 'password', label: 'Broker password (empty: unchanged)', kind: 'password', when: is('modelType', 'MQTT_CLIENT') },
  { path: 'qos', label: 'QoS', kind: 'select', options: ['0', '1', '2'], when: is('modelType', 'MQTT_CLIENT') },
  { path: 'readPermission', label: 'Read roles', kind: 'list', placeholder: 'user' },
  { path: 'editPermission', label: 'Edit roles', kind: 'list' },
];

const SOURCE_DEFAULTS: Record<string, Values> = {
  VIRTUAL: { updatePeriods: 1, updatePeriodType: 'SECONDS' },
  MODBUS_IP: { updatePeriods: 1, updatePeriodType: 'SECONDS', port: 502, unitId: 1, timeoutMs: 1000, retries: 2 },
  MQTT_CLIENT: { qos: 0 },
};

const sourceType = (v: Values) => String(v.sourceType ?? '');
const dataType = (v: Values) => String((v.pointLocator as Values | undefined)?.dataType ?? 'NUMERIC');
const virtual = (v: Values) => sourceType(v) === 'VIRTUAL';
const modbus = (v: Values) => sourceType(v) === 'MODBUS_IP';
const registers = (v: Values) => modbus(v) && !['COIL', 'DISCRETE_INPUT'].includes(String((v.pointLocator as Values | undefined)?.registerType ?? 'HOLDING'));
const changeTypeIs = (...types: string[]) => (v: Values) => virtual(v) && types.includes(String((v.pointLocator as Values | undefined)?.changeType ?? ''));

const POINT_FIELDS: FieldSpec[] = [
  { path: 'dataSourceXid', label: 'Data source', kind: 'select', options: [], fixedOnEdit: true },
  { path: 'name', label: 'Name', kind: 'text' },
  { path: 'xid', label: 'XID (empty: generated)', kind: 'text', fixedOnEdit: true, omitEmpty: true },
  { path: 'enabled', label: 'Enabled', kind: 'checkbox' },
  { path: 'deviceName', label: 'Device name (empty: the source name)', kind: 'text', omitEmpty: true },
  { path: 'pointLocator.dataType', label: 'Data type', kind: 'select', options: DATA_TYPES },
  { path: 'pointLocator.settable', label: 'Settable', kind: 'checkbox' },
  { path: 'unit', label: 'Unit', kind: 'text', placeholder: '°C' },
  { path: 'pointLocator.changeType', label: 'Change type', kind: 'select', options: (v) => CHANGE_TYPES[dataType(v)] ?? ['NO_CHANGE'], when: virtual },
  { path: 'pointLocator.min', label: 'Min', kind: 'number', when: (v) => virtual(v) && dataType(v) === 'NUMERIC' },
  { path: 'pointLocator.max', label: 'Max', kind: 'number', when: (v) => virtual(v) && dataType(v) === 'NUMERIC' },
  { path: 'pointLocator.step', label: 'Step', kind: 'number', when: changeTypeIs('RANDOM_WALK', 'INCREMENT') },
  { path: 'pointLocator.periodMs', label: 'Sine period (ms)', kind: 'integer', when: changeTypeIs('SINE') },
  { path: 'pointLocator.values', label: 'States (integers, comma-separated)', kind: 'numbers', when: (v) => virtual(v) && dataType(v) === 'MULTISTATE' },
  { path: 'pointLocator.startValue', label: 'Start value', kind: 'scalar', when: virtual },
  { path: 'pointLocator.offset', label: 'Offset', kind: 'integer', when: modbus },
  { path: 'pointLocator.registerType', label: 'Register type', kind: 'select', options: ['HOLDING', 'INPUT', 'COIL', 'DISCRETE_INPUT'], when: modbus },
  { path: 'pointLocator.dataEncoding', label: 'Encoding', kind: 'select', options: ['INT16', 'UINT16', 'INT32', 'UINT32', 'FLOAT32'], when: registers },
  { path: 'pointLocator.wordOrder', label: 'Word order', kind: 'select', options: ['BIG', 'LITTLE'], when: registers, hint: 'BIG: the high word at offset; LITTLE: the low word first' },
  { path: 'pointLocator.multiplier', label: 'Multiplier', kind: 'number', when: registers },
  { path: 'pointLocator.additive', label: 'Additive', kind: 'number', when: registers },
  { path: 'pointLocator.topic', label: 'Topic', kind: 'text', placeholder: 'site/boiler/temp', when: (v) => sourceType(v) === 'MQTT_CLIENT' },
  { path: 'pointLocator.jsonPath', label: 'JSON path (empty: the whole payload)', kind: 'text', placeholder: '$.data.t', when: (v) => sourceType(v) === 'MQTT_CLIENT' },
  { path: 'tags', label: 'Tags (key=value, comma-separated)', kind: 'tags' },
  { path: 'readPermission', label: 'Read roles', kind: 'list' },
  { path: 'editPermission', label: 'Edit roles', kind: 'list' },
  { path: 'setPermission', label: 'Set roles', kind: 'list' },
];

const POINT_DEFAULTS: Record<string, Values> = {
  VIRTUAL: { pointLocator: { dataType: 'NUMERIC', changeType: 'RANDOM_WALK', min: 0, max: 100 } },
  MODBUS_IP: { pointLocator: { dataType: 'NUMERIC', offset: 0, registerType: 'HOLDING', dataEncoding: 'UINT16', wordOrder: 'BIG', multiplier: 1, additive: 0 } },
  MQTT_CLIENT: { pointLocator: { dataType: 'NUMERIC', topic: '' } },
};

const DETECTOR_FIELDS: FieldSpec[] = [
  { path: 'name', label: 'Name', kind: 'text' },
  { path: 'xid', label: 'XID (empty: generated)', kind: 'text', fixedOnEdit: true, omitEmpty: true },
  { path: 'detectorType', label: 'Type', kind: 'select', options: DETECTOR_TYPES },
  { path: 'alarmLevel', label: 'Alarm level', kind: 'select', options: ALARM_LEVELS },
  { path: 'limit', label: 'Limit', kind: 'number', when: is('detectorType', 'HIGH_LIMIT', 'LOW_LIMIT') },
  { path: 'resetLimit', label: 'Reset limit (optional)', kind: 'number', when: is('detectorType', 'HIGH_LIMIT', 'LOW_LIMIT') },
  { path: 'low', label: 'Low', kind: 'number', when: is('detectorType', 'RANGE') },
  { path: 'high', label: 'High', kind: 'number', when: is('detectorType', 'RANGE') },
  { path: 'state', label: 'State (true/false or an integer)', kind: 'scalar', when: is('detectorType', 'BINARY_STATE', 'MULTISTATE_STATE') },
  { path: 'durationMs', label: 'For at least (ms)', kind: 'integer' },
  { path: 'rtnApplicable', label: 'Returns to normal', kind: 'checkbox' },
];

/** Keeps what the form does not show (loggingProperties, …) and drops read-only and derived fields. */
function merged(stored: Values | undefined, edited: Values, readOnly: readonly string[]): Values {
  const base: Values = { ...(stored ?? {}) };
  for (const k of readOnly) delete base[k];
  const out: Values = { ...base, ...edited };
  if (stored?.pointLocator || edited.pointLocator) out.pointLocator = { ...((stored?.pointLocator as Values) ?? {}), ...((edited.pointLocator as Values) ?? {}) };
  return out;
}

interface Editor<T> {
  panel: HTMLElement;
  form: SpecForm;
  status: HTMLElement;
  messages: HTMLElement;
  stored: T | undefined;
}

function editorParts<T>(prefix: string, specs: FieldSpec[], onChange: (path: string) => void, context?: (v: Values) => Values): Editor<T> {
  return {
    panel: byId(`${prefix}-panel`),
    form: specForm(byId(`${prefix}-fields`), specs, onChange, context),
    status: byId(`${prefix}-status`),
    messages: byId(`${prefix}-messages`),
    stored: undefined,
  };
}

/** A refusal: the field messages go next to their fields; the rest (and the summary) below. */
function refused(e: Editor<unknown>, err: unknown, what: string): void {
  const rest = e.form.showErrors(err);
  e.messages.replaceChildren(...rest.map((m) => h('li', {}, m)));
  say(e.status, `${what}: ${err instanceof Error ? err.message : String(err)}`, 'error');
}

export interface Editors {
  newSource(): void;
  editSource(ds: DataSource): void;
  deleteSource(ds: DataSource): Promise<void>;
  newPoint(sourceXid?: string): Promise<void>;
  editPoint(dp: DataPoint): Promise<void>;
  deletePoint(dp: DataPoint): Promise<void>;
  detectors(dp: DataPoint): Promise<void>;
}

export function editors(changed: () => Promise<void>): Editors {
  let sources: DataSource[] = [];
  const typeOfSource = (xid: unknown) => sources.find((s) => s.xid === xid)?.modelType ?? 'VIRTUAL';
  // A new source or point of another type gets that type's defaults in its empty boxes.
  const source = editorParts<DataSource>('source-editor', SOURCE_FIELDS, (path) => {
    if (path === 'modelType' && !source.stored) source.form.fill(SOURCE_DEFAULTS[String(source.form.read().modelType)] ?? {}, true);
  });
  const point = editorParts<DataPoint>(
    'point-editor',
    POINT_FIELDS,
    (path) => {
      if (path === 'dataSourceXid' && !point.stored) point.form.fill(POINT_DEFAULTS[typeOfSource(point.form.read().dataSourceXid)] ?? {}, true);
    },
    (v) => ({ sourceType: typeOfSource(v.dataSourceXid) }),
  );
  const detector = editorParts<Values>('detector-editor', DETECTOR_FIELDS, () => undefined);
  let detectorPoint: DataPoint | undefined;

  function open(e: Editor<unknown>, title: string, titleId: string): void {
    byId(titleId).textContent = title;
    say(e.status, '');
    e.messages.replaceChildren();
    e.panel.hidden = false;
    e.panel.scrollIntoView({ block: 'nearest' });
  }

  // Sources
  byId<HTMLFormElement>('source-editor-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    source.form.clearErrors();
    const edited = source.form.read();
    const stored = source.stored;
    const body = merged(stored as Values | undefined, edited, ['id', 'state', 'lastError', 'lastErrorTimestamp', 'lastErrorCleared']);
    if (stored) body.modelType = stored.modelType;
    if (stored && body.xid === undefined) body.xid = stored.xid;
    void (async () => {
      try {
        const saved = stored ? await put<DataSource>(`/data-sources/${seg(stored.xid)}`, body) : await post<DataSource>('/data-sources', body);
        source.stored = saved;
        say(source.status, `${stored ? 'Saved' : 'Created'} data source ${saved.name} (${saved.xid})`, 'ok');
        source.messages.replaceChildren();
        source.form.render(saved as Values, true);
        byId('source-editor-title').textContent = `Edit data source ${saved.name}`;
        await changed();
      } catch (err) {
        refused(source as Editor<unknown>, err, stored ? 'Not saved' : 'Not created');
      }
    })();
  });
  byId('source-editor-close').addEventListener('click', () => (source.panel.hidden = true));

  // Points
  async function loadSources(): Promise<void> {
    sources = (await get<List<DataSource>>('/data-sources?sort(name)&limit(1000)')).items;
  }

  function renderPoint(values: Values): void {
    POINT_FIELDS[0]!.options = sources.map((s) => s.xid);
    point.form.render(values, point.stored !== undefined);
    // The source select shows names; its values stay XIDs.
    const select = byId('point-editor-fields').querySelector<HTMLSelectElement>('select[name="dataSourceXid"]');
    for (const option of select?.options ?? []) {
      const ds = sources.find((s) => s.xid === option.value);
      if (ds) option.textContent = `${ds.name} (${ds.modelType})`;
    }
  }

  byId<HTMLFormElement>('point-editor-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    point.form.clearErrors();
    const edited = point.form.read();
    const stored = point.stored;
    const body = merged(stored as Values | undefined, edited, ['id', 'dataSourceName', 'dataSourceType', 'lastWarning', 'lastWarningTimestamp', 'lastWarningCleared']);
    if (stored && body.xid === undefined) body.xid = stored.xid;
    if (stored) body.dataSourceXid = stored.dataSourceXid;
    void (async () => {
      try {
        const saved = stored ? await put<DataPoint>(`/data-points/${seg(stored.xid)}`, body) : await post<DataPoint>('/data-points', body);
        point.stored = saved;
        say(point.status, `${stored ? 'Saved' : 'Created'} point ${saved.name} (${saved.xid})`, 'ok');
        point.messages.replaceChildren();
        renderPoint(saved as unknown as Values);
        byId('point-editor-title').textContent = `Edit point ${saved.name}`;
        await changed();
      } catch (err) {
        refused(point as Editor<unknown>, err, stored ? 'Not saved' : 'Not created');
      }
    })();
  });
  byId('point-editor-close').addEventListener('click', () => (point.panel.hidden = true));

  // Detectors
  async function listDetectors(dp: DataPoint): Promise<void> {
    const list = await get<List<Values>>(`/event-detectors?eq(dataPointXid,${seg(dp.xid)})&sort(name)`);
    byId<HTMLTableElement>('detectors-table').tBodies[0]!.replaceChildren(
      ...list.items.map((d) =>
        h(
          'tr',
          { 'data-xid': String(d.xid) },
          h('td', {}, String(d.name ?? '')),
          h('td', {}, String(d.detectorType)),
          h('td', {}, String(d.alarmLevel)),
          h('td', {}, describeDetector(d)),
          h(
            'td',
            {},
            h('button', { type: 'button', onclick: () => editDetector(d) }, 'Edit', h('span', { class: 'sr-only' }, ` detector ${String(d.name ?? d.xid)}`)),
            ' ',
            h('button', { type: 'button', onclick: () => void deleteDetector(d) }, 'Delete', h('span', { class: 'sr-only' }, ` detector ${String(d.name ?? d.xid)}`)),
          ),
        ),
      ),
    );
    byId('detectors-empty').hidden = list.items.length > 0;
  }

  function describeDetector(d: Values): string {
    const parts: string[] = [];
    for (const k of ['limit', 'resetLimit', 'low', 'high', 'state', 'durationMs']) if (d[k] !== undefined && d[k] !== null) parts.push(`${k} ${String(d[k])}`);
    return parts.join(', ');
  }

  function editDetector(d: Values | undefined): void {
    detector.stored = d;
    detector.form.render(d ?? { detectorType: 'HIGH_LIMIT', alarmLevel: 'URGENT', rtnApplicable: true, durationMs: 0 }, d !== undefined);
    byId('detector-editor-title').textContent = d ? `Edit detector ${String(d.name ?? d.xid)}` : 'New detector';
    byId<HTMLFormElement>('detector-editor-form').hidden = false;
    say(detector.status, '');
    detector.messages.replaceChildren();
  }

  async function deleteDetector(d: Values): Promise<void> {
    if (!window.confirm(`Delete detector ${String(d.name ?? d.xid)}?`)) return;
    try {
      await del(`/event-detectors/${seg(String(d.xid))}`);
      say(detector.status, `Deleted detector ${String(d.name ?? d.xid)}`, 'ok');
      if (detectorPoint) await listDetectors(detectorPoint);
    } catch (err) {
      sayError(detector.status, err);
    }
  }

  byId<HTMLFormElement>('detector-editor-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const dp = detectorPoint;
    if (!dp) return;
    detector.form.clearErrors();
    const stored = detector.stored;
    const body: Values = { ...merged(stored, detector.form.read(), ['id']), dataPointXid: dp.xid };
    if (stored && body.xid === undefined) body.xid = stored.xid;
    void (async () => {
      try {
        const saved = stored ? await put<Values>(`/event-detectors/${seg(String(stored.xid))}`, body) : await post<Values>('/event-detectors', body);
        editDetector(saved);
        say(detector.status, `${stored ? 'Saved' : 'Created'} detector ${String(saved.name ?? saved.xid)}`, 'ok');
        await listDetectors(dp);
      } catch (err) {
        refused(detector as Editor<unknown>, err, stored ? 'Not saved' : 'Not created');
      }
    })();
  });
  byId('detector-new').addEventListener('click', () => editDetector(undefined));
  byId('detector-editor-close').addEventListener('click', () => (detector.panel.hidden = true));

  return {
    newSource() {
      source.stored = undefined;
      source.form.render({ modelType: 'VIRTUAL', enabled: true, readPermission: ['user'], editPermission: [], ...SOURCE_DEFAULTS.VIRTUAL }, false);
      open(source as Editor<unknown>, 'New data source', 'source-editor-title');
    },
    editSource(ds) {
      source.stored = ds;
      source.form.render(ds as Values, true);
      open(source as Editor<unknown>, `Edit data source ${ds.name}`, 'source-editor-title');
    },
    async deleteSource(ds) {
      if (!window.confirm(`Delete data source ${ds.name} and its points? History is kept until purged.`)) return;
      await del(`/data-sources/${seg(ds.xid)}`);
      await changed();
    },
    async newPoint(sourceXid) {
      await loadSources();
      point.stored = undefined;
      const ds = sources.find((s) => s.xid === sourceXid) ?? sources[0];
      const type = ds?.modelType ?? 'VIRTUAL';
      renderPoint({ dataSourceXid: ds?.xid, enabled: true, readPermission: ['user'], editPermission: [], setPermission: [], ...POINT_DEFAULTS[type] });
      open(point as Editor<unknown>, 'New data point', 'point-editor-title');
    },
    async editPoint(dp) {
      await loadSources();
      point.stored = dp;
      renderPoint(dp as unknown as Values);
      open(point as Editor<unknown>, `Edit point ${dp.name}`, 'point-editor-title');
    },
    async deletePoint(dp) {
      if (!window.confirm(`Delete point ${dp.name}? History is kept until purged.`)) return;
      await del(`/data-points/${seg(dp.xid)}`);
      await changed();
    },
    async detectors(dp) {
      detectorPoint = dp;
      byId<HTMLFormElement>('detector-editor-form').hidden = true;
      open(detector as Editor<unknown>, `Event detectors of ${dp.name}`, 'detectors-title');
      try {
        await listDetectors(dp);
      } catch (err) {
        sayError(detector.status, err);
      }
    },
  };
}
