// Data points: the point locator checked against its source's type, permissions, and CRUD rules.
import { dataPointFromMango, virtualLocatorFromMango } from '../core/mango-input.js';
import { normaliseTextRenderer, PLAIN_RENDERER, rendererFits, textRendererProblems, type TextRenderer } from '../core/text-renderer.js';
import { updatePeriodMs } from '../core/time.js';
import { DomainError, validationMessage, type ValidationMessage } from '../core/errors.js';
import { TimeSlice, yieldToEventLoop } from '../core/time-slice.js';
import { READ_PAGE } from '../store/metadata/crud.js';
import type { Validator } from '../core/validation.js';
import type { DataSourceRecord, DataSourceType } from '../store/metadata/data-sources.js';
import {
  dataPointResource,
  type DataPointRecord,
  type DataPointsRepository,
  type DataType,
  type LoggingProperties,
  type Period,
  type PointRetention,
  type PointWarning,
} from '../store/metadata/data-points.js';
import type { DataSourceService } from './data-sources.js';
import { contextProblems, metaLocator, type ContextEntry } from './computed-points.js';
import { unreliableFields, type Unreliability } from '../values/live/reliability.js';
import { assertPermission, hasPermission, normaliseRoles, SUPERADMIN, USER_ROLE, type Principal } from './permissions.js';
import { generateXid, listQuery, mergePatch, translateDuplicateXid, type ListResult } from './resources.js';

const OBJECT_TYPE = 'DataPointVO';

export interface DataPointInput {
  xid?: string;
  name: string;
  enabled?: boolean;
  deviceName?: string;
  dataSourceXid: string;
  pointLocator: { dataType: DataType; settable?: boolean; [key: string]: unknown };
  unit?: string;
  textRenderer?: TextRenderer;
  tags?: Record<string, string>;
  rollup?: string;
  readPermission?: string[];
  editPermission?: string[];
  setPermission?: string[];
  loggingProperties?: Partial<LoggingProperties>;
  purgeOverride?: boolean;
  purgePeriod?: Period;
}

/** Mango's defaults: a new point stores a value when it changes. */
export const DEFAULT_LOGGING: LoggingProperties = {
  loggingType: 'ON_CHANGE',
  tolerance: 0,
  intervalLoggingPeriod: { periods: 15, type: 'MINUTES' },
  intervalLoggingType: 'INSTANT',
  discardExtremeValues: false,
  discardLowLimit: -Number.MAX_VALUE,
  discardHighLimit: Number.MAX_VALUE,
};
export const DEFAULT_PURGE_PERIOD: Period = { periods: 1, type: 'YEARS' };
/** What a point made without these settings gets. */
export const DEFAULT_POINT_SETTINGS = { loggingProperties: DEFAULT_LOGGING, purgeOverride: false, purgePeriod: DEFAULT_PURGE_PERIOD, textRenderer: PLAIN_RENDERER } as const;
/** A point's runtime warning fields before anything went wrong. */
export const NO_WARNING = { lastWarning: null, lastWarningTimestamp: null, lastWarningCleared: false } as const;

/**
 * The logging properties stored for a point: the given fields over the existing ones (or the
 * defaults), checked against the point's data type.
 */
function loggingSettings(
  given: Partial<LoggingProperties> | undefined,
  existing: LoggingProperties,
  dataType: DataType,
  problems: ValidationMessage[],
): LoggingProperties {
  const p: LoggingProperties = { ...existing, ...given };
  const field = (name: string) => `loggingProperties.${name}`;
  if (dataType !== 'NUMERIC') {
    if (p.loggingType === 'INTERVAL' && p.intervalLoggingType !== 'INSTANT') {
      problems.push(validationMessage(field('intervalLoggingType'), `must be INSTANT for ${dataType} points (statistics need numbers)`));
    }
    if (p.discardExtremeValues) problems.push(validationMessage(field('discardExtremeValues'), `must be false for ${dataType} points`));
  }
  if (p.discardExtremeValues && !(p.discardLowLimit < p.discardHighLimit)) {
    problems.push(validationMessage(field('discardHighLimit'), 'must be greater than discardLowLimit'));
  }
  return p;
}

/**
 * The text renderer stored for a point: the given one, checked against its data type; none given,
 * the stored one while it fits the data type, else PLAIN (a point whose data type changed).
 */
function rendererSetting(given: TextRenderer | undefined, existing: TextRenderer, dataType: DataType, problems: ValidationMessage[]): TextRenderer {
  if (given === undefined) return rendererFits(existing.type, dataType) ? existing : PLAIN_RENDERER;
  const found = textRendererProblems(given, dataType);
  for (const p of found) problems.push(validationMessage(`textRenderer.${p.field}`, p.message));
  return found.length > 0 ? PLAIN_RENDERER : normaliseTextRenderer(given);
}

/** The point as the API shows it; `mark`: its source cannot read it now (values/live/reliability.ts). */
export function dataPointView(p: DataPointRecord, mark?: Unreliability): Record<string, unknown> {
  return {
    id: p.id,
    xid: p.xid,
    name: p.name,
    enabled: p.enabled,
    deviceName: p.deviceName,
    dataSourceXid: p.dataSourceXid,
    dataSourceName: p.dataSourceName,
    dataSourceType: p.dataSourceType,
    pointLocator: { dataType: p.dataType, settable: p.settable, ...p.pointLocator },
    unit: p.unit,
    textRenderer: p.textRenderer,
    tags: p.tags,
    rollup: p.rollup,
    readPermission: p.readPermission,
    editPermission: p.editPermission,
    setPermission: p.setPermission,
    loggingProperties: p.loggingProperties,
    purgeOverride: p.purgeOverride,
    purgePeriod: p.purgePeriod,
    lastWarning: p.lastWarning,
    lastWarningTimestamp: p.lastWarningTimestamp,
    lastWarningCleared: p.lastWarningCleared,
    ...unreliableFields(mark),
  };
}

const LOCATOR_SCHEMA: Record<DataSourceType, string> = {
  VIRTUAL: 'point-locator-virtual',
  MODBUS_IP: 'point-locator-modbus-ip',
  MQTT_CLIENT: 'point-locator-mqtt-client',
  LINE_PROTOCOL: 'point-locator-line-protocol',
  META: 'point-locator-meta',
  OPC_UA: 'point-locator-opc-ua',
  BACNET_IP: 'point-locator-bacnet-ip',
};

const VIRTUAL_CHANGE_TYPES: Record<DataType, readonly string[]> = {
  NUMERIC: ['RANDOM_WALK', 'SINE', 'INCREMENT', 'RANDOM', 'NO_CHANGE'],
  BINARY: ['ALTERNATE', 'RANDOM', 'NO_CHANGE'],
  MULTISTATE: ['INCREMENT', 'RANDOM', 'NO_CHANGE'],
  ALPHANUMERIC: ['NO_CHANGE'],
};
const VIRTUAL_DEFAULT_CHANGE: Record<DataType, string> = { NUMERIC: 'RANDOM_WALK', BINARY: 'ALTERNATE', MULTISTATE: 'INCREMENT', ALPHANUMERIC: 'NO_CHANGE' };

const at = (field: string) => `pointLocator.${field}`;

/** Locator settings stored for a VIRTUAL point, with defaults, plus rule violations. */
function virtualLocator(loc: DataPointInput['pointLocator'], problems: ValidationMessage[]): Record<string, unknown> {
  const changeType = (loc.changeType as string | undefined) ?? VIRTUAL_DEFAULT_CHANGE[loc.dataType];
  if (!VIRTUAL_CHANGE_TYPES[loc.dataType].includes(changeType)) {
    problems.push(validationMessage(at('changeType'), `must be one of ${VIRTUAL_CHANGE_TYPES[loc.dataType].join(', ')} for ${loc.dataType} points`));
  }
  const out: Record<string, unknown> = { changeType };
  if (loc.dataType === 'NUMERIC') {
    const min = (loc.min as number | undefined) ?? 0;
    const max = (loc.max as number | undefined) ?? 100;
    if (min > max) problems.push(validationMessage(at('max'), 'must be greater than or equal to min'));
    Object.assign(out, { min, max });
    if (loc.step !== undefined) out.step = loc.step;
    if (loc.periodMs !== undefined) out.periodMs = loc.periodMs;
  }
  if (loc.roll !== undefined && changeType === 'INCREMENT') out.roll = loc.roll;
  if (loc.dataType === 'MULTISTATE') {
    if (loc.values === undefined && changeType !== 'NO_CHANGE') problems.push(validationMessage(at('values'), 'is required'));
    if (loc.values !== undefined) out.values = loc.values;
  }
  if (loc.startValue !== undefined) {
    const value = typedStartValue(loc.dataType, loc.startValue);
    if (value === undefined) problems.push(validationMessage(at('startValue'), `must be a ${loc.dataType} value`));
    out.startValue = value ?? loc.startValue;
  }
  return out;
}

const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const INTEGER = /^[+-]?\d+$/;

/**
 * A VIRTUAL startValue as the runtime reads it (number, boolean or string), or undefined when it is not
 * a value of the type. Mango clients send it as a string, so a string that parses as the type is taken
 * too; it is stored typed, so the point reads back the same whichever form the client sent.
 */
function typedStartValue(dataType: DataType, raw: unknown): number | boolean | string | undefined {
  const text = typeof raw === 'string' ? raw.trim() : undefined;
  switch (dataType) {
    case 'NUMERIC': {
      const n = typeof raw === 'number' ? raw : text !== undefined && DECIMAL.test(text) ? Number(text) : NaN;
      return Number.isFinite(n) ? n : undefined;
    }
    case 'MULTISTATE': {
      const n = typeof raw === 'number' ? raw : text !== undefined && INTEGER.test(text) ? Number(text) : NaN;
      return Number.isSafeInteger(n) ? n : undefined;
    }
    case 'BINARY': {
      // "true"/"false" in any case; "1"/"0" are refused, as the numbers 1 and 0 are.
      if (typeof raw === 'boolean') return raw;
      const lower = text?.toLowerCase();
      return lower === 'true' ? true : lower === 'false' ? false : undefined;
    }
    case 'ALPHANUMERIC':
      return typeof raw === 'string' ? raw : undefined;
  }
}

const WORDS: Record<string, number> = { INT16: 1, UINT16: 1, INT32: 2, UINT32: 2, FLOAT32: 2 };

function modbusLocator(loc: DataPointInput['pointLocator'], problems: ValidationMessage[]): Record<string, unknown> {
  const registerType = (loc.registerType as string | undefined) ?? 'HOLDING';
  const offset = loc.offset as number;
  const bitType = registerType === 'COIL' || registerType === 'DISCRETE_INPUT';
  if (bitType && loc.dataType !== 'BINARY') {
    problems.push(validationMessage(at('dataType'), 'must be BINARY for coils and discrete inputs'));
  }
  if (!bitType && loc.dataType !== 'NUMERIC' && loc.dataType !== 'MULTISTATE') {
    problems.push(validationMessage(at('dataType'), 'must be NUMERIC or MULTISTATE for registers'));
  }
  if (loc.settable && (registerType === 'INPUT' || registerType === 'DISCRETE_INPUT')) {
    problems.push(validationMessage(at('settable'), `must be false: ${registerType} registers are read-only`));
  }
  if (bitType) return { offset, registerType };
  const dataEncoding = (loc.dataEncoding as string | undefined) ?? 'UINT16';
  if (offset + (WORDS[dataEncoding] ?? 1) > 65536) problems.push(validationMessage(at('offset'), `must be between 0 and 65534 for ${dataEncoding}`));
  if (loc.dataType === 'MULTISTATE' && dataEncoding === 'FLOAT32') problems.push(validationMessage(at('dataEncoding'), 'must be an integer encoding for MULTISTATE points'));
  if (loc.multiplier === 0) problems.push(validationMessage(at('multiplier'), 'must not be 0'));
  return {
    offset,
    registerType,
    dataEncoding,
    wordOrder: (loc.wordOrder as string | undefined) ?? 'BIG',
    multiplier: (loc.multiplier as number | undefined) ?? 1,
    additive: (loc.additive as number | undefined) ?? 0,
  };
}

function mqttLocator(loc: DataPointInput['pointLocator'], problems: ValidationMessage[]): Record<string, unknown> {
  const topic = loc.topic as string;
  if (loc.settable && /[+#]/.test(topic)) problems.push(validationMessage(at('topic'), 'must not contain wildcards (+ or #) on a settable point'));
  return loc.jsonPath === undefined ? { topic } : { topic, jsonPath: loc.jsonPath };
}

/** An OPC_UA point: its node (the schema checks the id's form) and how often the server samples it. */
function opcuaLocator(loc: DataPointInput['pointLocator']): Record<string, unknown> {
  return { nodeId: loc.nodeId, samplingIntervalMs: loc.samplingIntervalMs ?? 1000 };
}

/** A Sparkplug B point: the metric (of the edge node, or of one of its devices) its values come from. */
function sparkplugLocator(loc: DataPointInput['pointLocator']): Record<string, unknown> {
  return loc.deviceId === undefined ? { metricName: loc.metricName } : { metricName: loc.metricName, deviceId: loc.deviceId };
}

/** A BACNET_IP point: an object's present value; analog objects are NUMERIC, binary BINARY, multi-state MULTISTATE (or NUMERIC). */
function bacnetLocator(loc: DataPointInput['pointLocator'], problems: ValidationMessage[]): Record<string, unknown> {
  const objectType = loc.objectType as string;
  const family = objectType.startsWith('ANALOG') ? 'analog' : objectType.startsWith('BINARY') ? 'binary' : 'multi-state';
  const allowed = family === 'analog' ? ['NUMERIC'] : family === 'binary' ? ['BINARY'] : ['MULTISTATE', 'NUMERIC'];
  if (!allowed.includes(loc.dataType)) problems.push(validationMessage(at('dataType'), `must be ${allowed.join(' or ')} for ${family} objects`));
  if (loc.settable && objectType.endsWith('_INPUT')) problems.push(validationMessage(at('settable'), `must be false: the present value of ${objectType} is read-only`));
  return { objectType, objectInstance: loc.objectInstance, property: 'PRESENT_VALUE', writePriority: (loc.writePriority as number | undefined) ?? 16 };
}

/** A LINE_PROTOCOL point: the series and field its values come from (services/line-protocol.ts matches them). */
function lineProtocolLocator(loc: DataPointInput['pointLocator']): Record<string, unknown> {
  return { measurement: loc.measurement, tags: loc.tags ?? {}, field: loc.field };
}

const notFound = () => DomainError.notFound('Data point not found');
/** Who makes the points a driver asks for (no user asked). */
const SYSTEM_PRINCIPAL: Principal = { username: 'system', permissions: [SUPERADMIN] };

function sameTags(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && a[k] === b[k]);
}

/** Points a statement of findManyByXid reads: a fifth of READ_PAGE (crud.ts), a wide row decoding in ~0.2 ms under load. */
const REFRESH_PAGE = READ_PAGE / 5;

/** Where a point's source is found: the source service, or a caller's lookup (an import's, a chunk at a time). */
export type SourceLookup = Pick<DataSourceService, 'findByXid' | 'findById'>;

/** Something that caches points (the point-value service) and must forget a changed one. */
export interface DataPointListener {
  /** Created, updated or deleted; awaited before the API answers (the runtime restarts its source). */
  pointChanged(point: DataPointRecord): Promise<void> | void;
  /**
   * Many points changed at once (a configuration import: records as they were before, XIDs kept),
   * beside the sources in `savedSources`, whose listeners heard sourceSaved already. A listener
   * without it hears pointChanged for each.
   */
  pointsChanged?(points: readonly DataPointRecord[], savedSources: ReadonlySet<number>): Promise<void> | void;
}

export class DataPointService {
  private readonly listeners: DataPointListener[] = [];

  onChange(listener: DataPointListener): void {
    this.listeners.push(listener);
  }

  private async changed(point: DataPointRecord): Promise<void> {
    for (const l of this.listeners) await l.pointChanged(point);
  }

  /**
   * Points saved by other means (a configuration import; the records as they were before), beside
   * the sources `savedSources` announced already: the listeners hear them at once, not one by one.
   */
  async announceChanged(points: readonly DataPointRecord[], savedSources: ReadonlySet<number>): Promise<void> {
    const slice = new TimeSlice();
    for (const l of this.listeners) {
      if (l.pointsChanged) await l.pointsChanged(points, savedSources);
      else {
        for (const p of points) {
          await l.pointChanged(p);
          await slice.yieldIfExpired();
        }
      }
    }
  }

  constructor(
    private readonly repo: DataPointsRepository,
    private readonly sources: DataSourceService,
    private readonly validator: Validator,
  ) {}

  async list(user: Principal, rawQuery: string): Promise<ListResult<DataPointRecord>> {
    const q = listQuery(user, dataPointResource, rawQuery, 't.read_permission');
    return { total: await this.repo.count(q), batches: this.repo.page(q) };
  }

  /** `[xid, name, deviceName]` of the readable points an RQL query selects, in its order and window (JSON text). */
  labels(user: Principal, rawQuery: string): Promise<string> {
    return this.repo.labels(listQuery(user, dataPointResource, rawQuery, 't.read_permission'));
  }

  async get(user: Principal, xid: string): Promise<DataPointRecord> {
    const p = await this.repo.findOne('xid', xid);
    if (!p) throw notFound();
    assertPermission(user, p.readPermission);
    return p;
  }

  /** Edit needs the point's edit permission or its source's. */
  async getForEdit(user: Principal, xid: string): Promise<DataPointRecord> {
    const p = await this.repo.findOne('xid', xid);
    if (!p) throw notFound();
    await this.checkEdit(user, p);
    return p;
  }

  /** May the user edit this stored point: read permission, and edit permission on it or its source. */
  async checkEdit(user: Principal, p: DataPointRecord): Promise<void> {
    assertPermission(user, p.readPermission);
    if (!(await this.mayEdit(user, p))) throw DomainError.accessDenied();
  }

  async mayEdit(user: Principal, p: DataPointRecord): Promise<boolean> {
    if (hasPermission(user, p.editPermission)) return true;
    const ds = await this.sources.findById(p.dataSourceId);
    return ds !== undefined && hasPermission(user, ds.editPermission);
  }

  /** Every point, in id order, a page at a time (for warming caches after a start). */
  pages(): AsyncGenerator<DataPointRecord[]> {
    return this.repo.pages();
  }

  findByXid(xid: string): Promise<DataPointRecord | undefined> {
    return this.repo.findOne('xid', xid);
  }

  /**
   * The points of these XIDs that exist, by XID. A refresh of every cached point reads them all: in
   * statements of REFRESH_PAGE rows, each a few ms on PGlite's thread, with the event loop let in
   * between, so none holds up a fan-out long.
   */
  async findManyByXid(xids: readonly string[]): Promise<Map<string, DataPointRecord>> {
    const found = new Map<string, DataPointRecord>();
    for (let i = 0; i < xids.length; i += REFRESH_PAGE) {
      if (i > 0) await yieldToEventLoop();
      for (const p of await this.repo.findMany('xid', xids.slice(i, i + REFRESH_PAGE))) found.set(p.xid, p);
    }
    return found;
  }

  findById(id: number): Promise<DataPointRecord | undefined> {
    return this.repo.findOne('id', id);
  }

  /** Every point's retention settings, for the purge. */
  retention(): Promise<PointRetention[]> {
    return this.repo.retention();
  }

  /** Points of a source, for the runtime. */
  /** Runtime state (runtime/point-warnings.ts): not a configuration change, so no listener hears it. */
  setWarning(pointId: number, warning: PointWarning): Promise<void> {
    return this.repo.setWarning(pointId, warning);
  }

  forSource(sourceId: number): Promise<DataPointRecord[]> {
    return this.repo.findAll('dataSourceId', sourceId);
  }

  async create(user: Principal, body: unknown): Promise<DataPointRecord> {
    const record = await this.newRecord(user, body);
    await this.checkContext(user, record);
    const created = await this.repo.insert(record).catch((err: unknown) => {
      throw translateDuplicateXid(err);
    });
    await this.changed(created);
    return created;
  }

  /**
   * Points a source's driver makes (a Sparkplug BIRTH's metrics, with createPoints): made as the
   * system, with set permission for the source's editors.
   */
  createForSource(ds: DataSourceRecord, points: readonly { xid: string; name: string; deviceName?: string; pointLocator: Record<string, unknown> }[]): Promise<DataPointRecord[]> {
    return this.createMany(
      SYSTEM_PRINCIPAL,
      points.map((p) => ({ ...p, dataSourceXid: ds.xid, setPermission: ds.editPermission })),
    );
  }

  /**
   * Creates several points as create does, then tells the listeners once (a source restarts once for
   * all of them, not once per point: a Sparkplug BIRTH defines many metrics at a time).
   */
  async createMany(user: Principal, bodies: readonly unknown[]): Promise<DataPointRecord[]> {
    const created: DataPointRecord[] = [];
    try {
      for (const body of bodies) {
        const record = await this.newRecord(user, body);
        await this.checkContext(user, record);
        created.push(
          await this.repo.insert(record).catch((err: unknown) => {
            throw translateDuplicateXid(err);
          }),
        );
      }
    } finally {
      if (created.length > 0) await this.announceChanged(created, new Set());
    }
    return created;
  }

  /** What create stores for `body`, checked as create checks it; nothing is written. `sources`: where its source is found. */
  async newRecord(user: Principal, body: unknown, sources: SourceLookup = this.sources): Promise<Partial<DataPointRecord>> {
    const input = this.validator.validate<DataPointInput>('data-point', dataPointFromMango(body));
    const ds = await sources.findByXid(input.dataSourceXid);
    if (!ds) throw DomainError.invalid('dataSourceXid', 'Data source not found', OBJECT_TYPE);
    if (!this.sources.mayEdit(user, ds)) throw DomainError.accessDenied();
    const { locator, loggingProperties, textRenderer } = this.checkSettings(ds, input, DEFAULT_LOGGING, PLAIN_RENDERER);
    return {
      xid: input.xid ?? generateXid('DP'),
      name: input.name,
      enabled: input.enabled ?? true,
      deviceName: input.deviceName ?? ds.name,
      dataSourceId: ds.id,
      dataType: input.pointLocator.dataType,
      settable: input.pointLocator.settable ?? false,
      pointLocator: locator,
      unit: input.unit ?? '',
      textRenderer,
      tags: input.tags ?? {},
      rollup: input.rollup ?? 'NONE',
      readPermission: normaliseRoles(input.readPermission ?? [USER_ROLE]),
      editPermission: normaliseRoles(input.editPermission ?? []),
      setPermission: normaliseRoles(input.setPermission ?? []),
      loggingProperties,
      purgeOverride: input.purgeOverride ?? false,
      purgePeriod: input.purgePeriod ?? DEFAULT_PURGE_PERIOD,
    };
  }

  async update(user: Principal, xid: string, body: unknown): Promise<DataPointRecord> {
    const existing = await this.getForEdit(user, xid);
    const changes = await this.changesTo(existing, body);
    await this.checkContext(user, changes);
    const saved = await this.repo.update(existing.id, changes).catch((err: unknown) => {
      throw translateDuplicateXid(err);
    });
    if (!saved) throw notFound();
    await this.changed(existing);
    return saved;
  }

  /** PATCH: the fields given over the stored point's view, then exactly as update (resources.ts mergePatch). */
  async patch(user: Principal, xid: string, body: unknown): Promise<DataPointRecord> {
    return this.update(user, xid, mergePatch(dataPointView(await this.get(user, xid)), body));
  }

  /**
   * What update stores over `existing` for `body`, checked as update checks it (the edit permission
   * is the caller's to check); nothing is written.
   */
  async changesTo(existing: DataPointRecord, body: unknown, sources: SourceLookup = this.sources): Promise<Partial<DataPointRecord>> {
    const input = this.validator.validate<DataPointInput>('data-point', dataPointFromMango(body));
    if (input.dataSourceXid !== existing.dataSourceXid) throw DomainError.invalid('dataSourceXid', 'cannot be changed', OBJECT_TYPE);
    const ds = await sources.findById(existing.dataSourceId);
    if (!ds) throw notFound();
    const { locator, loggingProperties, textRenderer } = this.checkSettings(ds, input, existing.loggingProperties, existing.textRenderer);
    return {
      xid: input.xid ?? existing.xid,
      name: input.name,
      enabled: input.enabled ?? existing.enabled,
      deviceName: input.deviceName ?? existing.deviceName,
      dataType: input.pointLocator.dataType,
      settable: input.pointLocator.settable ?? false,
      pointLocator: locator,
      unit: input.unit ?? existing.unit,
      textRenderer,
      tags: input.tags ?? existing.tags,
      rollup: input.rollup ?? existing.rollup,
      readPermission: normaliseRoles(input.readPermission ?? existing.readPermission),
      editPermission: normaliseRoles(input.editPermission ?? existing.editPermission),
      setPermission: normaliseRoles(input.setPermission ?? existing.setPermission),
      loggingProperties,
      purgeOverride: input.purgeOverride ?? existing.purgeOverride,
      purgePeriod: input.purgePeriod ?? existing.purgePeriod,
    };
  }

  /**
   * Enables or disables the point (Mango's enable-disable; edit permission). `restart` with enabled
   * true starts it again even when it runs: the listeners hear it as an edit (its source restarts with
   * it, its detectors reload, the other instances are told). Nothing changed and no restart: nothing
   * happens, as in Mango.
   */
  async setEnabled(user: Principal, xid: string, body: unknown): Promise<DataPointRecord> {
    const existing = await this.getForEdit(user, xid);
    const { enabled, restart = false } = this.validator.validate<{ enabled: boolean; restart?: boolean }>('data-point-enable-disable', body);
    if (enabled === existing.enabled && !(enabled && restart)) return existing;
    const saved = enabled === existing.enabled ? existing : await this.repo.update(existing.id, { enabled });
    if (!saved) throw notFound();
    await this.changed(existing);
    return saved;
  }

  /**
   * Stores new tags on a point the caller may edit (checkEdit), as a save: the listeners hear it.
   * Undefined when its tags changed since `existing` was read (the caller reads it again) or it is
   * gone; tags equal to the stored ones are not written.
   */
  async saveTags(existing: DataPointRecord, tags: Record<string, string>): Promise<DataPointRecord | undefined> {
    if (sameTags(existing.tags, tags)) return existing;
    if (!(await this.repo.replaceTags(existing.id, existing.tags, tags))) return undefined;
    await this.changed(existing);
    return { ...existing, tags };
  }

  async delete(user: Principal, xid: string): Promise<DataPointRecord> {
    const existing = await this.getForEdit(user, xid);
    await this.repo.delete(existing.id);
    await this.changed(existing);
    return existing;
  }

  /**
   * A computed point's context against the stored points (services/computed-points.ts): they exist, the
   * user may read them, and they lead to no cycle. A configuration import checks its computed points
   * once they are all written (checkImportedContexts), so they may name points later in the document.
   */
  private async checkContext(user: Principal, record: Partial<DataPointRecord>): Promise<void> {
    // Only a META locator has a context (each type's locator is rebuilt field by field at save).
    const context = record.pointLocator?.context as ContextEntry[] | undefined;
    if (!Array.isArray(context)) return;
    const problems = await contextProblems(user, record.xid!, { script: String(record.pointLocator!.script), context }, (xids) => this.findManyByXid(xids));
    if (problems.length > 0) throw DomainError.validation(problems, OBJECT_TYPE);
  }

  /** The context problems of these imported computed points (XIDs), read back as written in the import's transaction. */
  async checkImportedContexts(user: Principal, xids: readonly string[]): Promise<Map<string, ValidationMessage[]>> {
    const out = new Map<string, ValidationMessage[]>();
    for (const p of (await this.findManyByXid(xids)).values()) {
      const problems = await this.checkContextProblems(user, p);
      if (problems.length > 0) out.set(p.xid, problems);
    }
    return out;
  }

  private checkContextProblems(user: Principal, p: DataPointRecord): Promise<ValidationMessage[]> {
    const context = p.pointLocator.context as ContextEntry[] | undefined;
    if (p.dataSourceType !== 'META' || context === undefined) return Promise.resolve([]);
    return contextProblems(user, p.xid, { script: String(p.pointLocator.script), context }, (xids) => this.findManyByXid(xids));
  }

  /** Checks the locator (against its source type's schema and rules) and the logging properties; returns what is stored. */
  private checkSettings(
    ds: DataSourceRecord,
    input: DataPointInput,
    existingLogging: LoggingProperties,
    existingRenderer: TextRenderer,
  ): { locator: Record<string, unknown>; loggingProperties: LoggingProperties; textRenderer: TextRenderer } {
    // Mango's change types and fields, read into ours (the period of its sine is counted in polls).
    const loc = ds.modelType === 'VIRTUAL' ? (virtualLocatorFromMango(input.pointLocator, updatePeriodMs(ds)) as typeof input.pointLocator) : input.pointLocator;
    const sparkplug = ds.modelType === 'MQTT_CLIENT' && ds.settings.payloadFormat === 'SPARKPLUG_B';
    this.validator.validate(sparkplug ? 'point-locator-sparkplug-b' : LOCATOR_SCHEMA[ds.modelType], loc, 'pointLocator');
    const problems: ValidationMessage[] = [];
    const locator =
            ds.modelType === 'VIRTUAL'
        ? virtualLocator(loc, problems)
        : ds.modelType === 'MODBUS_IP'
          ? modbusLocator(loc, problems)
          : ds.modelType === 'LINE_PROTOCOL'
            ? lineProtocolLocator(loc)
            : ds.modelType === 'META'
              ? { ...metaLocator(loc, problems) }
              : ds.modelType === 'OPC_UA'
                ? opcuaLocator(loc)
                : ds.modelType === 'BACNET_IP'
                  ? bacnetLocator(loc, problems)
                  : sparkplug
                    ? sparkplugLocator(loc)
                    : mqttLocator(loc, problems);
    const loggingProperties = loggingSettings(input.loggingProperties, existingLogging, loc.dataType, problems);
    const textRenderer = rendererSetting(input.textRenderer, existingRenderer, loc.dataType, problems);
    if (problems.length > 0) throw DomainError.validation(problems, OBJECT_TYPE);
    return { locator, loggingProperties, textRenderer };
  }
}
