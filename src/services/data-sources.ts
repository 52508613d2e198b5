// Data sources: validation per model type, permissions, and the rules of create/update/delete.
import { dataSourceFromMango } from '../core/mango-input.js';
import { DomainError } from '../core/errors.js';
import type { Validator } from '../core/validation.js';
import { dataSourceResource, type DataSourceRecord, type DataSourceState, type DataSourceType, type DataSourcesRepository, type UpdatePeriodType } from '../store/metadata/data-sources.js';
import { assertPermission, assertSuperadmin, hasPermission, normaliseRoles, USER_ROLE, type Principal } from './permissions.js';
import { generateXid, listQuery, mergePatch, translateDuplicateXid, type ListResult } from './resources.js';

/** Type-specific settings with their defaults; anything else in a body is ignored. */
const SETTINGS_DEFAULTS: Record<DataSourceType, Record<string, unknown>> = {
  VIRTUAL: {},
  MODBUS_IP: { host: undefined, port: 502, unitId: 1, timeoutMs: 1000, retries: 2 },
  MQTT_CLIENT: { brokerUrl: undefined, clientId: '', username: '', password: '', qos: 0, payloadFormat: 'JSON', groupId: '+', edgeNodeId: '', createPoints: false },
  LINE_PROTOCOL: { createPoints: false },
  META: {},
  OPC_UA: { endpointUrl: undefined, securityMode: 'None', securityPolicy: 'Basic256Sha256', username: '', password: '', publishingIntervalMs: 1000 },
  BACNET_IP: { localPort: 47808, broadcastAddress: '255.255.255.255', deviceInstance: undefined, address: '', covSubscribe: false, timeoutMs: 3000 },
};
/** Settings never returned by the API. */
const WRITE_ONLY = new Set(['password']);

export interface DataSourceInput {
  xid?: string;
  name: string;
  enabled?: boolean;
  modelType: DataSourceType;
  updatePeriods?: number;
  updatePeriodType?: UpdatePeriodType;
  readPermission?: string[];
  editPermission?: string[];
  [setting: string]: unknown;
}

export type DataSourceView = Record<string, unknown>;

/** One child node of an OPC UA node, as the browse answers it. */
export interface BrowsedNode {
  nodeId: string;
  browseName: string;
  nodeClass: string;
  dataType: string | null;
}

/**
 * Lists a node's children on a source's server (runtime/opcua.ts). Rejects with a TypeError for a
 * node id it cannot read, a RangeError for a node the server does not have, an Error otherwise.
 */
export type SourceBrowser = (settings: Record<string, unknown>, nodeId: string) => Promise<BrowsedNode[]>;


export function dataSourceView(ds: DataSourceRecord): DataSourceView {
  const settings = Object.fromEntries(Object.entries(ds.settings).filter(([k]) => !WRITE_ONLY.has(k)));
  return {
    id: ds.id,
    xid: ds.xid,
    name: ds.name,
    enabled: ds.enabled,
    modelType: ds.modelType,
    updatePeriods: ds.updatePeriods,
    updatePeriodType: ds.updatePeriodType,
    readPermission: ds.readPermission,
    editPermission: ds.editPermission,
    state: ds.state,
    lastError: ds.lastError,
    lastErrorTimestamp: ds.lastErrorTimestamp,
    lastErrorCleared: ds.lastErrorCleared,
    runningOn: ds.runningOn,
    ...settings,
  };
}

/** Something that must know when a source changes (the runtime starts, restarts or stops it). */
export interface DataSourceListener {
  sourceSaved(source: DataSourceRecord): Promise<void> | void;
  sourceDeleted(source: DataSourceRecord): Promise<void> | void;
}

const notFound = () => DomainError.notFound('Data source not found');
/** Names the object in validation summaries, as the schema does. */
const OBJECT_TYPE = 'DataSourceVO';

/** What a BACNET_IP source's discovery finds (runtime/bacnet.ts's devices, kept opaque here). */
export type Discoverer = (source: DataSourceRecord, waitMs: number) => Promise<unknown[]>;

/** How long discovery waits for I-Am answers by default, and its bounds (ms). */
export const DISCOVER_WAIT_MS = { default: 2000, min: 100, max: 10_000 } as const;

export class DataSourceService {
  private readonly listeners: DataSourceListener[] = [];
  private discoverer: Discoverer | undefined;

  constructor(
    private readonly repo: DataSourcesRepository,
    private readonly validator: Validator,
  ) {}

  private browser: SourceBrowser | null = null;

  setBrowser(browser: SourceBrowser): void {
    this.browser = browser;
  }

  /**
   * The children of a node on an OPC_UA source's server, through a session of its own (the source
   * need not be enabled, nor run on this instance). Read permission on the source, as its GET.
   */
  async browse(user: Principal, xid: string, nodeId: string): Promise<BrowsedNode[]> {
    const ds = await this.get(user, xid);
    if (ds.modelType !== 'OPC_UA' || !this.browser) throw DomainError.badRequest('Only OPC_UA data sources can be browsed');
    try {
      return await this.browser(ds.settings, nodeId);
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      if (err instanceof TypeError) throw DomainError.badRequest(`Query parameter nodeId ${reason}`);
      if (err instanceof RangeError) throw DomainError.notFound(reason);
      throw new DomainError('device-failed', `Browse failed: ${reason}`, { cause: err });
    }
  }

  onChange(listener: DataSourceListener): void {
    this.listeners.push(listener);
  }

  async list(user: Principal, rawQuery: string): Promise<ListResult<DataSourceRecord>> {
    const q = listQuery(user, dataSourceResource, rawQuery, 't.read_permission');
    return { total: await this.repo.count(q), batches: this.repo.page(q) };
  }

  /** The source if it exists and the user may read it (404 before 403). */
  async get(user: Principal, xid: string): Promise<DataSourceRecord> {
    const ds = await this.repo.findOne('xid', xid);
    if (!ds) throw notFound();
    assertPermission(user, ds.readPermission);
    return ds;
  }

  async getForEdit(user: Principal, xid: string): Promise<DataSourceRecord> {
    const ds = await this.get(user, xid);
    assertPermission(user, ds.editPermission);
    return ds;
  }

  /** Used by points and the runtime; no permission check. */
  findById(id: number): Promise<DataSourceRecord | undefined> {
    return this.repo.findOne('id', id);
  }

  findByXid(xid: string): Promise<DataSourceRecord | undefined> {
    return this.repo.findOne('xid', xid);
  }

  mayEdit(user: Principal, ds: DataSourceRecord): boolean {
    return hasPermission(user, ds.editPermission);
  }

  async create(user: Principal, body: unknown): Promise<DataSourceRecord> {
    assertSuperadmin(user);
    const input = this.validator.validate<DataSourceInput>('data-source', dataSourceFromMango(body));
    const saved = await this.repo
      .insert({
        xid: input.xid ?? generateXid('DS'),
        name: input.name,
        enabled: input.enabled ?? false,
        modelType: input.modelType,
        updatePeriods: input.updatePeriods ?? 1,
        updatePeriodType: input.updatePeriodType ?? 'SECONDS',
        readPermission: normaliseRoles(input.readPermission ?? [USER_ROLE]),
        editPermission: normaliseRoles(input.editPermission ?? []),
        settings: settingsFrom(input, {}),
      })
      .catch((err: unknown) => {
        throw translateDuplicateXid(err);
      });
    return this.notifySaved(saved);
  }

  async update(user: Principal, xid: string, body: unknown): Promise<DataSourceRecord> {
    const existing = await this.getForEdit(user, xid);
    const input = this.validator.validate<DataSourceInput>('data-source', dataSourceFromMango(body));
    if (input.modelType !== existing.modelType) throw DomainError.invalid('modelType', 'cannot be changed', OBJECT_TYPE);
    const saved = await this.repo
      .update(existing.id, {
        xid: input.xid ?? existing.xid,
        name: input.name,
        enabled: input.enabled ?? existing.enabled,
        updatePeriods: input.updatePeriods ?? existing.updatePeriods,
        updatePeriodType: input.updatePeriodType ?? existing.updatePeriodType,
        readPermission: normaliseRoles(input.readPermission ?? existing.readPermission),
        editPermission: normaliseRoles(input.editPermission ?? existing.editPermission),
        settings: settingsFrom(input, existing.settings),
      })
      .catch((err: unknown) => {
        throw translateDuplicateXid(err);
      });
    if (!saved) throw notFound();
    return this.notifySaved(saved);
  }

  /** PATCH: the fields given over the stored source's view, then exactly as update (resources.ts mergePatch). */
  async patch(user: Principal, xid: string, body: unknown): Promise<DataSourceRecord> {
    return this.update(user, xid, mergePatch(dataSourceView(await this.get(user, xid)), body));
  }

  /** The runtime's discovery (BACNET_IP: Who-Is and the devices' objects). */
  setDiscoverer(discoverer: Discoverer): void {
    this.discoverer = discoverer;
  }

  /**
   * The devices a BACNET_IP source can reach and their objects (edit permission: discovery sends on
   * the source's network). A local port that cannot be bound is a 503.
   */
  async discover(user: Principal, xid: string, waitMs: number): Promise<{ devices: unknown[] }> {
    const ds = await this.getForEdit(user, xid);
    if (ds.modelType !== 'BACNET_IP' || !this.discoverer) throw DomainError.badRequest(`Discovery is for BACNET_IP data sources, not ${ds.modelType}`);
    try {
      return { devices: await this.discoverer(ds, waitMs) };
    } catch (err) {
      throw new DomainError('unavailable', `Discovery failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
  }

  async setEnabled(user: Principal, xid: string, body: unknown): Promise<DataSourceRecord> {
    const existing = await this.getForEdit(user, xid);
    const { enabled } = this.validator.validate<{ enabled: boolean }>('enable-disable', body);
    const saved = await this.repo.update(existing.id, { enabled });
    if (!saved) throw notFound();
    return this.notifySaved(saved);
  }

  async delete(user: Principal, xid: string): Promise<DataSourceRecord> {
    const existing = await this.getForEdit(user, xid);
    // Stop it before its points disappear from under the runtime.
    await this.notify((l) => l.sourceDeleted(existing));
    await this.repo.delete(existing.id);
    return existing;
  }

  /** Every source (the runtime starts the enabled ones). */
  async all(): Promise<DataSourceRecord[]> {
    return [...(await this.repo.findAll('enabled', true)), ...(await this.repo.findAll('enabled', false))];
  }

  /** Runtime state: written by the data source runtime, not through the API. */
  setState(id: number, state: DataSourceState, lastError: string | null): Promise<void> {
    return this.repo.setState(id, state, lastError);
  }

  /** Which instance runs the source: written by the runtime when it takes or hands over the lease. */
  setRunningOn(id: number, instance: string): Promise<void> {
    return this.repo.setRunningOn(id, instance);
  }

  clearRunningOn(ids: readonly number[], instance: string): Promise<void> {
    return this.repo.clearRunningOn(ids, instance);
  }

  /** A source saved by other means (a configuration import): the listeners hear it as if saved here. */
  async announceSaved(id: number): Promise<void> {
    const saved = await this.repo.findOne('id', id);
    if (saved) await this.notifySaved(saved);
  }

  /** Tells the listeners (the runtime starts or stops it), then answers with the state that left. */
  private async notifySaved(saved: DataSourceRecord): Promise<DataSourceRecord> {
    await this.notify((l) => l.sourceSaved(saved));
    return (await this.repo.findOne('id', saved.id)) ?? saved;
  }

  private async notify(fn: (l: DataSourceListener) => Promise<void> | void): Promise<void> {
    for (const l of this.listeners) await fn(l);
  }
}

/** The model type's settings from the body; a write-only field left out keeps its stored value. */
function settingsFrom(input: DataSourceInput, stored: Record<string, unknown>): Record<string, unknown> {
  const settings: Record<string, unknown> = {};
  for (const [key, fallback] of Object.entries(SETTINGS_DEFAULTS[input.modelType])) {
    const value = input[key] ?? (WRITE_ONLY.has(key) ? stored[key] : undefined) ?? fallback;
    if (value !== undefined) settings[key] = value;
  }
  return settings;
}
