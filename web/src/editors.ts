// Create and edit data sources of every type, their points with every locator field, and a point's
// event detectors (API-DECISIONS "Data sources and points"). Each editor is a spec form (spec-form.ts)
// in a panel: the fields shown follow the source type and data type; Save POSTs a new resource or
// PUTs the whole edited one (fields the form does not show are kept from the stored resource); a
// refusal puts each field message next to its field.
import { del, get, post, put, seg, type DataPoint, type DataSource, type List, type User } from './api.js';
import { bacnetPicker } from './bacnet-picker.js';
import { byId, formatTime, h, say, sayError } from './dom.js';
import { mayAddPointTo, mayEditDetector } from './may.js';
import { metaContextPicker, type ContextEntry } from './meta-context.js';
import { specForm, type FieldSpec, type SpecForm, type Values } from './spec-form.js';
import { TEXT_RENDERER_FIELDS } from './text-renderer-fields.js';

const DATA_TYPES = ['NUMERIC', 'BINARY', 'MULTISTATE', 'ALPHANUMERIC'];
const PERIOD_TYPES = ['MILLISECONDS', 'SECONDS', 'MINUTES', 'HOURS'];
const CHANGE_TYPES: Record<string, string[]> = {
  NUMERIC: ['RANDOM_WALK', 'SINE', 'INCREMENT', 'RANDOM', 'NO_CHANGE'],
  BINARY: ['ALTERNATE', 'RANDOM', 'NO_CHANGE'],
  MULTISTATE: ['INCREMENT', 'RANDOM', 'NO_CHANGE'],
  ALPHANUMERIC: ['NO_CHANGE'],
};
/** The rollups a point's charts default to, in words. */
const ROLLUP_NAMES: Record<string, string> = {
  NONE: 'None (raw values)',
  AVERAGE: 'Average (time-weighted)',
  ARITHMETIC_MEAN: 'Arithmetic mean',
  MINIMUM: 'Lowest',
  MAXIMUM: 'Highest',
  SUM: 'Sum',
  FIRST: 'First',
  LAST: 'Last',
  START: 'Start of each period',
  COUNT: 'Count',
  DELTA: 'Delta',
  INTEGRAL: 'Integral',
  ALL: 'All statistics',
};
const ALARM_LEVELS = ['NONE', 'INFORMATION', 'IMPORTANT', 'WARNING', 'URGENT', 'CRITICAL', 'LIFE_SAFETY'];
/** The detector types a point of each data type takes (the API refuses the others). */
const DETECTOR_TYPES: Record<string, readonly string[]> = {
  NUMERIC: ['HIGH_LIMIT', 'LOW_LIMIT', 'RANGE', 'NO_UPDATE'],
  BINARY: ['BINARY_STATE', 'NO_UPDATE'],
  MULTISTATE: ['MULTISTATE_STATE', 'NO_UPDATE'],
  ALPHANUMERIC: ['ALPHANUMERIC_REGEX_STATE', 'NO_UPDATE'],
};
const ALL_DETECTOR_TYPES = [...new Set(Object.values(DETECTOR_TYPES).flat())];
/** Of the point's data type (given by the editor's context); every type before it is known. */
const detectorTypes = (v: Values): readonly string[] => {
  const fitting = DETECTOR_TYPES[String(v.pointDataType)] ?? ALL_DETECTOR_TYPES;
  // A stored detector of a type that no longer fits the point (its data type changed) keeps its type.
  return typeof v.storedType === 'string' && !fitting.includes(v.storedType) ? [v.storedType, ...fitting] : fitting;
};

const is = (path: string, ...values: string[]) => (v: Values) => values.includes(String(locatorOr(v, path)));
function locatorOr(v: Values, path: string): unknown {
  return path.startsWith('pointLocator.') ? (v.pointLocator as Values | undefined)?.[path.slice(13)] : v[path];
}

/** Types whose values are collected on a period (MQTT, OPC UA and line protocol are pushed). */
const polled = (v: Values) => !['MQTT_CLIENT', 'LINE_PROTOCOL', 'META', 'OPC_UA'].includes(String(v.modelType));

const sparkplugSource = (v: Values) => v.modelType === 'MQTT_CLIENT' && v.payloadFormat === 'SPARKPLUG_B';

const SOURCE_FIELDS: FieldSpec[] = [
  { path: 'modelType', label: 'Type', kind: 'select', options: ['VIRTUAL', 'MODBUS_IP', 'MQTT_CLIENT', 'LINE_PROTOCOL', 'META', 'OPC_UA', 'BACNET_IP'], fixedOnEdit: true },
  { path: 'name', label: 'Name', kind: 'text' },
  { path: 'xid', label: 'XID (empty: generated)', kind: 'text', fixedOnEdit: true, omitEmpty: true },
  { path: 'enabled', label: 'Enabled', kind: 'checkbox' },
  { path: 'updatePeriods', label: 'Update period', kind: 'integer', when: polled },
  { path: 'updatePeriodType', label: 'Period unit', kind: 'select', options: PERIOD_TYPES, when: polled },
  { path: 'host', label: 'Host', kind: 'text', when: is('modelType', 'MODBUS_IP') },
  { path: 'port', label: 'Port', kind: 'integer', when: is('modelType', 'MODBUS_IP') },
  { path: 'unitId', label: 'Unit id', kind: 'integer', when: is('modelType', 'MODBUS_IP') },
  { path: 'timeoutMs', label: 'Timeout (ms)', kind: 'integer', when: is('modelType', 'MODBUS_IP', 'BACNET_IP') },
  { path: 'retries', label: 'Retries', kind: 'integer', when: is('modelType', 'MODBUS_IP') },
  { path: 'brokerUrl', label: 'Broker URL', kind: 'text', placeholder: 'mqtt://host:1883', when: is('modelType', 'MQTT_CLIENT') },
  { path: 'clientId', label: 'Client id (empty: generated)', kind: 'text', when: is('modelType', 'MQTT_CLIENT') },
  { path: 'endpointUrl', label: 'Endpoint URL', kind: 'text', placeholder: 'opc.tcp://host:4840', when: is('modelType', 'OPC_UA') },
  { path: 'securityMode', label: 'Security mode', kind: 'select', options: ['None', 'Sign', 'SignAndEncrypt'], when: is('modelType', 'OPC_UA') },
  {
    path: 'securityPolicy',
    label: 'Security policy',
    kind: 'select',
    options: ['Basic256Sha256', 'Aes128_Sha256_RsaOaep', 'Aes256_Sha256_RsaPss', 'Basic256', 'Basic128Rsa15'],
    when: (v) => String(v.modelType) === 'OPC_UA' && String(v.securityMode ?? 'None') !== 'None',
  },
  { path: 'publishingIntervalMs', label: 'Publishing interval (ms)', kind: 'integer', when: is('modelType', 'OPC_UA') },
  { path: 'username', label: 'Login (empty: anonymous)', kind: 'text', when: is('modelType', 'MQTT_CLIENT', 'OPC_UA') },
  { path: 'password', label: 'Password (empty: unchanged)', kind: 'password', when: is('modelType', 'MQTT_CLIENT', 'OPC_UA') },
  { path: 'qos', label: 'QoS', kind: 'select', options: ['0', '1', '2'], when: is('modelType', 'MQTT_CLIENT') },
  { path: 'payloadFormat', label: 'Payload format', kind: 'select', options: ['JSON', 'SPARKPLUG_B'], when: is('modelType', 'MQTT_CLIENT') },
  { path: 'groupId', label: 'Sparkplug group id (+: every group)', kind: 'text', placeholder: '+', when: sparkplugSource },
  { path: 'edgeNodeId', label: 'Edge node id (empty: every edge node)', kind: 'text', when: sparkplugSource },
  {
    path: 'createPoints',
    label: 'Create a point for each new series (Sparkplug B: each new metric of a BIRTH)',
    kind: 'checkbox',
    when: (v) => v.modelType === 'LINE_PROTOCOL' || sparkplugSource(v),
  },
  { path: 'deviceInstance', label: 'Device instance', kind: 'integer', when: is('modelType', 'BACNET_IP') },
  { path: 'address', label: 'Device address (empty: found by Who-Is)', kind: 'text', placeholder: '192.168.1.20 or host:47809', when: is('modelType', 'BACNET_IP') },
  { path: 'broadcastAddress', label: 'Broadcast address (Who-Is)', kind: 'text', placeholder: '255.255.255.255', when: is('modelType', 'BACNET_IP') },
  { path: 'localPort', label: 'Local UDP port', kind: 'integer', when: is('modelType', 'BACNET_IP') },
  { path: 'covSubscribe', label: 'Subscribe to COV where the device offers it', kind: 'checkbox', when: is('modelType', 'BACNET_IP') },
  { path: 'readPermission', label: 'Read roles', kind: 'list', placeholder: 'user' },
  { path: 'editPermission', label: 'Edit roles', kind: 'list' },
];

const SOURCE_DEFAULTS: Record<string, Values> = {
  VIRTUAL: { updatePeriods: 1, updatePeriodType: 'SECONDS' },
  MODBUS_IP: { updatePeriods: 1, updatePeriodType: 'SECONDS', port: 502, unitId: 1, timeoutMs: 1000, retries: 2 },
  MQTT_CLIENT: { qos: 0, payloadFormat: 'JSON', groupId: '+', edgeNodeId: '', createPoints: false },
  LINE_PROTOCOL: { createPoints: false },
  META: {},
  OPC_UA: { securityMode: 'None', securityPolicy: 'Basic256Sha256', publishingIntervalMs: 1000 },
  BACNET_IP: { updatePeriods: 5, updatePeriodType: 'SECONDS', localPort: 47808, broadcastAddress: '255.255.255.255', address: '', covSubscribe: false, timeoutMs: 3000 },
};

const sourceType = (v: Values) => String(v.sourceType ?? '');
const dataType = (v: Values) => String((v.pointLocator as Values | undefined)?.dataType ?? 'NUMERIC');
const virtual = (v: Values) => sourceType(v) === 'VIRTUAL';
const modbus = (v: Values) => sourceType(v) === 'MODBUS_IP';
const registers = (v: Values) => modbus(v) && !['COIL', 'DISCRETE_INPUT'].includes(String((v.pointLocator as Values | undefined)?.registerType ?? 'HOLDING'));
const meta = (v: Values) => sourceType(v) === 'META';
const bacnet = (v: Values) => sourceType(v) === 'BACNET_IP';
const BACNET_OBJECT_TYPES = ['ANALOG_INPUT', 'ANALOG_OUTPUT', 'ANALOG_VALUE', 'BINARY_INPUT', 'BINARY_OUTPUT', 'BINARY_VALUE', 'MULTI_STATE_INPUT', 'MULTI_STATE_OUTPUT', 'MULTI_STATE_VALUE'];
const updateEventIs = (event: string) => (v: Values) => meta(v) && String((v.pointLocator as Values | undefined)?.updateEvent ?? 'CONTEXT_UPDATE') === event;
const changeTypeIs = (...types: string[]) => (v: Values) => virtual(v) && types.includes(String((v.pointLocator as Values | undefined)?.changeType ?? ''));

const POINT_FIELDS: FieldSpec[] = [
  { path: 'dataSourceXid', label: 'Data source', kind: 'select', options: [], fixedOnEdit: true },
  { path: 'name', label: 'Name', kind: 'text' },
  { path: 'xid', label: 'XID (empty: generated)', kind: 'text', fixedOnEdit: true, omitEmpty: true },
  { path: 'enabled', label: 'Enabled', kind: 'checkbox' },
  { path: 'deviceName', label: 'Device name (empty: the source name)', kind: 'text', omitEmpty: true },
  { path: 'pointLocator.dataType', label: 'Data type', kind: 'select', options: (v) => (meta(v) ? DATA_TYPES.slice(0, 3) : DATA_TYPES) },
  { path: 'pointLocator.settable', label: 'Settable', kind: 'checkbox', when: (v) => !meta(v) },
  { path: 'unit', label: 'Unit', kind: 'text', placeholder: '°C' },
  ...TEXT_RENDERER_FIELDS,
  { path: 'pointLocator.changeType', label: 'Change type', kind: 'select', options: (v) => CHANGE_TYPES[dataType(v)] ?? ['NO_CHANGE'], when: virtual },
  { path: 'pointLocator.min', label: 'Min', kind: 'number', when: (v) => virtual(v) && dataType(v) === 'NUMERIC' },
  { path: 'pointLocator.max', label: 'Max', kind: 'number', when: (v) => virtual(v) && dataType(v) === 'NUMERIC' },
  { path: 'pointLocator.step', label: 'Step', kind: 'number', when: changeTypeIs('RANDOM_WALK', 'INCREMENT') },
  { path: 'pointLocator.roll', label: 'Start again after the end (else turn back)', kind: 'checkbox', when: changeTypeIs('INCREMENT') },
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
  { path: 'pointLocator.nodeId', label: 'Node id', kind: 'text', placeholder: 'ns=2;s=Tag1', when: (v) => sourceType(v) === 'OPC_UA' },
  { path: 'pointLocator.samplingIntervalMs', label: 'Sampling interval (ms)', kind: 'integer', when: (v) => sourceType(v) === 'OPC_UA' },
  { path: 'pointLocator.metricName', label: 'Metric name', kind: 'text', placeholder: 'Inputs/Temperature', when: (v) => sourceType(v) === 'SPARKPLUG_B' },
  { path: 'pointLocator.deviceId', label: 'Device id (empty: a metric of the edge node)', kind: 'text', omitEmpty: true, when: (v) => sourceType(v) === 'SPARKPLUG_B' },
  { path: 'pointLocator.objectType', label: 'Object type', kind: 'select', options: BACNET_OBJECT_TYPES, when: bacnet },
  { path: 'pointLocator.objectInstance', label: 'Object instance', kind: 'integer', when: bacnet },
  { path: 'pointLocator.writePriority', label: 'Write priority (1 highest – 16)', kind: 'integer', when: (v) => bacnet(v) && (v.pointLocator as Values | undefined)?.settable === true },
  { path: 'pointLocator.measurement', label: 'Measurement', kind: 'text', placeholder: 'weather', when: (v) => sourceType(v) === 'LINE_PROTOCOL' },
  { path: 'pointLocator.tags', label: 'Series tags (key=value, comma-separated)', kind: 'tags', when: (v) => sourceType(v) === 'LINE_PROTOCOL' },
  { path: 'pointLocator.field', label: 'Field', kind: 'text', placeholder: 'temp', when: (v) => sourceType(v) === 'LINE_PROTOCOL' },
  { path: 'pointLocator.context', label: 'Context (variable=point XID, comma-separated)', kind: 'context', placeholder: 'heat=DP_heat, power=DP_power', when: meta },
  {
    path: 'pointLocator.script',
    label: 'Script',
    kind: 'script',
    placeholder: 'heat / power',
    when: meta,
    hint: 'An expression over the context variables: + - * / % **, comparisons, && || !, ?:, math functions (abs, round, sqrt, min, max, …) and avg(x, "15m"), min(x, "1h"), max, last, delta over a trailing window',
  },
  { path: 'pointLocator.updateEvent', label: 'Update on', kind: 'select', options: ['CONTEXT_UPDATE', 'CRON'], when: meta },
  { path: 'pointLocator.cronPattern', label: 'Cron pattern (seconds first when 6 parts)', kind: 'text', placeholder: '0 */15 * * * *', when: updateEventIs('CRON') },
  { path: 'pointLocator.executionDelayMs', label: 'Delay after a context update (ms)', kind: 'integer', when: updateEventIs('CONTEXT_UPDATE'), hint: 'Updates within the delay make one computation' },
  { path: 'tags', label: 'Tags (key=value, comma-separated)', kind: 'tags' },
  { path: 'rollup', label: 'Default chart rollup', kind: 'select', options: Object.keys(ROLLUP_NAMES), optionText: ROLLUP_NAMES, hint: "The rollup of a chart that asks for the point's own (POINT_DEFAULT)" },
  { path: 'readPermission', label: 'Read roles', kind: 'list' },
  { path: 'editPermission', label: 'Edit roles', kind: 'list' },
  { path: 'setPermission', label: 'Set roles', kind: 'list' },
];

const POINT_DEFAULTS: Record<string, Values> = {
  VIRTUAL: { pointLocator: { dataType: 'NUMERIC', changeType: 'RANDOM_WALK', min: 0, max: 100, roll: true } },
  MODBUS_IP: { pointLocator: { dataType: 'NUMERIC', offset: 0, registerType: 'HOLDING', dataEncoding: 'UINT16', wordOrder: 'BIG', multiplier: 1, additive: 0 } },
  MQTT_CLIENT: { pointLocator: { dataType: 'NUMERIC', topic: '' } },
  SPARKPLUG_B: { pointLocator: { dataType: 'NUMERIC', metricName: '' } },
  LINE_PROTOCOL: { pointLocator: { dataType: 'NUMERIC', measurement: '', tags: {}, field: '' } },
  BACNET_IP: { pointLocator: { dataType: 'NUMERIC', objectType: 'ANALOG_VALUE', objectInstance: 0, writePriority: 16 } },
  META: { pointLocator: { dataType: 'NUMERIC', script: '', context: [], updateEvent: 'CONTEXT_UPDATE', executionDelayMs: 0 } },
  OPC_UA: { pointLocator: { dataType: 'NUMERIC', nodeId: '', samplingIntervalMs: 1000 } },
};

const DETECTOR_FIELDS: FieldSpec[] = [
  { path: 'name', label: 'Name', kind: 'text' },
  { path: 'xid', label: 'XID (empty: generated)', kind: 'text', fixedOnEdit: true, omitEmpty: true },
  { path: 'detectorType', label: 'Type', kind: 'select', options: detectorTypes },
  { path: 'alarmLevel', label: 'Alarm level', kind: 'select', options: ALARM_LEVELS },
  { path: 'limit', label: 'Limit', kind: 'number', when: is('detectorType', 'HIGH_LIMIT', 'LOW_LIMIT') },
  { path: 'resetLimit', label: 'Reset limit (optional)', kind: 'number', when: is('detectorType', 'HIGH_LIMIT', 'LOW_LIMIT') },
  { path: 'low', label: 'Low', kind: 'number', when: is('detectorType', 'RANGE') },
  { path: 'high', label: 'High', kind: 'number', when: is('detectorType', 'RANGE') },
  { path: 'state', label: 'State (true/false or an integer)', kind: 'scalar', when: is('detectorType', 'BINARY_STATE', 'MULTISTATE_STATE') },
  // A pattern stays text ("1" or "true" too): a control of its own on the same property.
  {
    path: 'state',
    key: 'statePattern',
    label: 'Pattern (regular expression)',
    kind: 'text',
    placeholder: 'ALARM|FAULT',
    when: is('detectorType', 'ALPHANUMERIC_REGEX_STATE'),
    hint: 'RE2 syntax; active while the pattern is found in the value',
  },
  { path: 'durationMs', label: 'For at least (ms)', kind: 'integer' },
  { path: 'rtnApplicable', label: 'Returns to normal', kind: 'checkbox' },
  { path: 'readPermission', label: 'Read roles', kind: 'list' },
  { path: 'editPermission', label: 'Edit roles', kind: 'list' },
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
  /** `editable`: the user may edit the point (may.ts mayEditPoint), so add detectors and edit them all. */
  detectors(dp: DataPoint, editable?: boolean): Promise<void>;
}

export function editors(changed: () => Promise<void>, user: () => User | undefined): Editors {
  let sources: DataSource[] = [];
  // A Sparkplug B source's points have their own locator fields: a type of their own here.
  const typeOfSource = (xid: unknown) => {
    const ds = sources.find((s) => s.xid === xid);
    return ds?.modelType === 'MQTT_CLIENT' && ds.payloadFormat === 'SPARKPLUG_B' ? 'SPARKPLUG_B' : (ds?.modelType ?? 'VIRTUAL');
  };
  // A new source or point of another type gets that type's defaults in its empty boxes.
  const source = editorParts<DataSource>('source-editor', SOURCE_FIELDS, (path) => {
    if (path === 'modelType' && !source.stored) source.form.fill(SOURCE_DEFAULTS[String(source.form.read().modelType)] ?? {}, true);
  });
  const point = editorParts<DataPoint>(
    'point-editor',
    POINT_FIELDS,
    (path) => {
      if (path === 'dataSourceXid' && !point.stored) point.form.fill(POINT_DEFAULTS[typeOfSource(point.form.read().dataSourceXid)] ?? {}, true);
      if (path === 'dataSourceXid') showBrowse();
      if (path === 'dataSourceXid') showPicker();
      if (path === 'dataSourceXid') void showContext();
      if (path === 'pointLocator.context') context.refresh();
    },
    (v) => ({ sourceType: typeOfSource(v.dataSourceXid) }),
  );
  const picker = bacnetPicker((values) => {
    // fill() puts every field: the picked ones over what the form holds now.
    const now = point.form.read();
    point.form.fill({ ...now, ...values, pointLocator: { ...(now.pointLocator as Values | undefined), ...(values.pointLocator as Values) } }, false);
  });
  const contextField = () => byId('point-editor-fields').querySelector<HTMLInputElement>('input[name="pointLocator.context"]');
  const context = metaContextPicker({
    read: () => ((point.form.read().pointLocator as Values | undefined)?.context as ContextEntry[] | undefined) ?? [],
    write(entries) {
      const field = contextField();
      if (field) field.value = entries.map((c) => `${c.var}=${c.xid}`).join(', ');
    },
    script: () => byId('point-editor-fields').querySelector<HTMLTextAreaElement>('textarea[name="pointLocator.script"]'),
  });
  /** The context picker beside the point form, for a point of a META source. */
  async function showContext(): Promise<void> {
    await context.show(typeOfSource(point.form.read().dataSourceXid) === 'META', point.stored?.xid);
  }
  /** The BACnet picker beside the point form, for a point of a BACNET_IP source. */
  function showPicker(): void {
    const xid = String(point.form.read().dataSourceXid ?? '');
    picker.show(typeOfSource(xid) === 'BACNET_IP' ? xid : undefined);
  }
  let detectorPoint: DataPoint | undefined;
  let detectorPointEditable = true;
  const detector: Editor<Values> = editorParts<Values>('detector-editor', DETECTOR_FIELDS, () => undefined, () => ({
    pointDataType: detectorPoint?.pointLocator.dataType,
    storedType: detector.stored?.detectorType,
  }));

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

  // OPC UA: a picker over the source's server (GET /data-sources/<xid>/browse). An Object or folder
  // opens; a Variable fills the node id.
  function showBrowse(): void {
    const xid = point.form.read().dataSourceXid;
    byId('point-editor-browse').hidden = typeOfSource(xid) !== 'OPC_UA';
    byId('point-editor-nodes').replaceChildren();
    byId('point-editor-browse-at').textContent = '';
  }

  async function browse(nodeId: string | undefined): Promise<void> {
    const xid = String(point.form.read().dataSourceXid ?? '');
    const at = byId('point-editor-browse-at');
    const list = byId('point-editor-nodes');
    at.textContent = `Browsing ${nodeId ?? 'Objects'}…`;
    try {
      const nodes = await get<{ nodeId: string; browseName: string; nodeClass: string; dataType: string | null }[]>(
        `/data-sources/${seg(xid)}/browse${nodeId ? `?nodeId=${encodeURIComponent(nodeId)}` : ''}`,
      );
      at.textContent = nodeId ?? 'Objects';
      list.replaceChildren(
        ...(nodeId ? [h('li', {}, h('button', { type: 'button', onclick: () => void browse(undefined) }, '↑ Objects'))] : []),
        ...nodes.map((n) =>
          h(
            'li',
            {},
            n.nodeClass === 'Variable'
              ? h('button', { type: 'button', onclick: () => pickNode(n.nodeId) }, `Use ${n.browseName}`)
              : h('button', { type: 'button', onclick: () => void browse(n.nodeId) }, `Open ${n.browseName}`),
            h('span', { class: 'muted' }, ` ${n.nodeId} · ${n.nodeClass}${n.dataType ? ` · ${n.dataType}` : ''}`),
          ),
        ),
      );
    } catch (err) {
      at.textContent = `Browse failed: ${err instanceof Error ? err.message : String(err)}`;
    }
  }

  function pickNode(nodeId: string): void {
    const input = byId('point-editor-fields').querySelector<HTMLInputElement>('input[name="pointLocator.nodeId"]');
    if (input) input.value = nodeId;
    byId('point-editor-browse-at').textContent = `Node id set to ${nodeId}`;
  }
  byId('point-editor-browse-button').addEventListener('click', () => void browse(undefined));

  function renderPoint(values: Values): void {
    // A new point goes only to a source the user may edit (may.ts).
    POINT_FIELDS[0]!.options = sources.filter((s) => point.stored !== undefined || mayAddPointTo(user(), s)).map((s) => s.xid);
    // A stored virtual point without roll rolls over (the API's default): the box shows that.
    const locator = values.pointLocator as Values | undefined;
    point.form.render(locator && locator.roll === undefined ? { ...values, pointLocator: { ...locator, roll: true } } : values, point.stored !== undefined);
    showWarning(point.stored);
    showBrowse();
    // The source select shows names; its values stay XIDs.
    const select = byId('point-editor-fields').querySelector<HTMLSelectElement>('select[name="dataSourceXid"]');
    for (const option of select?.options ?? []) {
      const ds = sources.find((s) => s.xid === option.value);
      if (ds) option.textContent = `${ds.name} (${ds.modelType})`;
    }
    showPicker();
    void showContext();
  }

  /** The point's last run-time warning (a computed point's script failure, an unreadable payload). */
  function showWarning(dp: DataPoint | undefined): void {
    const line = byId('point-editor-warning');
    line.hidden = !dp?.lastWarning;
    if (!dp?.lastWarning) return;
    const when = dp.lastWarningTimestamp ? ` (${formatTime(dp.lastWarningTimestamp)})` : '';
    line.textContent = `Last run-time warning${when}: ${dp.lastWarning}${dp.lastWarningCleared ? ' — a good value has come since' : ''}`;
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
            ...(mayEditDetector(user(), { editPermission: Array.isArray(d.editPermission) ? (d.editPermission as string[]) : [] }, detectorPointEditable) ? detectorActions(d) : []),
          ),
        ),
      ),
    );
    byId('detectors-empty').hidden = list.items.length > 0;
  }

  function detectorActions(d: Values): (Node | string)[] {
    return [
      h('button', { type: 'button', onclick: () => editDetector(d) }, 'Edit', h('span', { class: 'sr-only' }, ` detector ${String(d.name ?? d.xid)}`)),
      ' ',
      h('button', { type: 'button', onclick: () => void deleteDetector(d) }, 'Delete', h('span', { class: 'sr-only' }, ` detector ${String(d.name ?? d.xid)}`)),
    ];
  }

  function describeDetector(d: Values): string {
    const parts: string[] = [];
    for (const k of ['limit', 'resetLimit', 'low', 'high', 'state', 'durationMs']) if (d[k] !== undefined && d[k] !== null) parts.push(`${k} ${String(d[k])}`);
    return parts.join(', ');
  }

  function editDetector(d: Values | undefined): void {
    detector.stored = d;
    const firstType = DETECTOR_TYPES[detectorPoint?.pointLocator.dataType ?? 'NUMERIC']?.[0] ?? 'HIGH_LIMIT';
    detector.form.render(d ?? { detectorType: firstType, alarmLevel: 'URGENT', rtnApplicable: true, durationMs: 0, readPermission: ['user'], editPermission: [] }, d !== undefined);
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
    async detectors(dp, editable = true) {
      detectorPoint = dp;
      detectorPointEditable = editable;
      byId('detector-new').hidden = !editable;
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
