// Data sources table and its RQL properties.
import type { ResourceDef } from '../../core/rql/index.js';
import { CrudRepository } from './crud.js';
import type { Queryable } from './db.js';

export const DATA_SOURCE_TYPES = ['VIRTUAL', 'MODBUS_IP', 'MQTT_CLIENT', 'LINE_PROTOCOL', 'META', 'OPC_UA', 'BACNET_IP'] as const;
export type DataSourceType = (typeof DATA_SOURCE_TYPES)[number];
export const DATA_SOURCE_STATES = ['RUNNING', 'STOPPED', 'ERROR'] as const;
export type DataSourceState = (typeof DATA_SOURCE_STATES)[number];
export const UPDATE_PERIOD_TYPES = ['MILLISECONDS', 'SECONDS', 'MINUTES', 'HOURS'] as const;
export type UpdatePeriodType = (typeof UPDATE_PERIOD_TYPES)[number];

export interface DataSourceRecord {
  [key: string]: unknown;
  id: number;
  xid: string;
  name: string;
  enabled: boolean;
  modelType: DataSourceType;
  updatePeriods: number;
  updatePeriodType: UpdatePeriodType;
  readPermission: string[];
  editPermission: string[];
  /** Type-specific settings: host, port, unitId, timeoutMs, retries; brokerUrl, username, password, qos. */
  settings: Record<string, unknown>;
  state: DataSourceState;
  lastError: string | null;
  /** When lastError happened (epoch ms). */
  lastErrorTimestamp: number | null;
  /** The source has recovered (or restarted) since lastError. */
  lastErrorCleared: boolean;
  /** The instance running the source (INSTANCE_NAME of its lease holder); null when it runs nowhere. */
  runningOn: string | null;
}

export const dataSourceResource: ResourceDef = {
  name: 'data sources',
  properties: {
    id: { column: 't.id', type: 'integer' },
    xid: { column: 't.xid', type: 'string' },
    name: { column: 't.name', type: 'string' },
    enabled: { column: 't.enabled', type: 'boolean' },
    modelType: { column: 't.model_type', type: 'enum', values: DATA_SOURCE_TYPES },
    state: { column: 't.state', type: 'enum', values: DATA_SOURCE_STATES },
    runningOn: { column: 't.running_on', type: 'string' },
  },
  tiebreak: 't.id',
};

/** setState's SQL for runningOn: a STOPPED source runs nowhere; otherwise it is left as it is. */
const STOPPED_RUNS_NOWHERE = "case when $2 = 'STOPPED' then null else running_on end";

export class DataSourcesRepository extends CrudRepository<DataSourceRecord> {
  constructor(db: Queryable) {
    super(db, {
      table: 'data_sources',
      from: 'data_sources t',
      read: {
        id: 't.id',
        xid: 't.xid',
        name: 't.name',
        enabled: 't.enabled',
        modelType: 't.model_type',
        updatePeriods: 't.update_periods',
        updatePeriodType: 't.update_period_type',
        readPermission: 't.read_permission',
        editPermission: 't.edit_permission',
        settings: 't.settings',
        state: 't.state',
        lastError: 't.last_error',
        lastErrorTimestamp: 't.last_error_ts',
        lastErrorCleared: 't.last_error_cleared',
        runningOn: 't.running_on',
      },
      write: {
        xid: 'xid',
        name: 'name',
        enabled: 'enabled',
        modelType: 'model_type',
        updatePeriods: 'update_periods',
        updatePeriodType: 'update_period_type',
        readPermission: 'read_permission',
        editPermission: 'edit_permission',
        settings: 'settings',
      },
      json: ['settings'],
    });
  }

  /**
   * Runtime state, written by the data source runtime. ERROR stamps the error now and opens it; any
   * other state keeps the text for diagnosis, marked cleared (stamped now if the text is new); no text
   * forgets the error. STOPPED: the source runs nowhere, so runningOn is cleared.
   */
  async setState(id: number, state: DataSourceState, lastError: string | null, now = Date.now()): Promise<void> {
    if (lastError === null) {
      await this.db.query(`update data_sources set state = $2, running_on = ${STOPPED_RUNS_NOWHERE}, last_error = null, last_error_ts = null, last_error_cleared = false where id = $1`, [id, state]);
    } else if (state === 'ERROR') {
      await this.db.query('update data_sources set state = $2, last_error = $3, last_error_ts = $4, last_error_cleared = false where id = $1', [id, state, lastError, now]);
    } else {
      await this.db.query(
        `update data_sources set state = $2, running_on = ${STOPPED_RUNS_NOWHERE}, last_error_cleared = true,
           last_error_ts = case when last_error is distinct from $3 or last_error_ts is null then $4 else last_error_ts end, last_error = $3
         where id = $1`,
        [id, state, lastError, now],
      );
    }
  }

  /** The source runs on `instance` now (it took the lease). */
  async setRunningOn(id: number, instance: string): Promise<void> {
    await this.db.query('update data_sources set running_on = $2 where id = $1', [id, instance]);
  }

  /** `instance` handed the sources over; a name written since by the next holder is kept. */
  async clearRunningOn(ids: readonly number[], instance: string): Promise<void> {
    if (ids.length === 0) return;
    await this.db.query('update data_sources set running_on = null where id = any($1::integer[]) and running_on = $2', [ids, instance]);
  }
}
