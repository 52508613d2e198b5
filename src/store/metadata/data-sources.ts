// Data sources table and its RQL properties.
import type { ResourceDef } from '../../core/rql/index.js';
import { CrudRepository } from './crud.js';
import type { Queryable } from './db.js';

export const DATA_SOURCE_TYPES = ['VIRTUAL', 'MODBUS_IP', 'MQTT_CLIENT'] as const;
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
  },
  tiebreak: 't.id',
};

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

  /** Runtime state, written by the data source runtime. */
  async setState(id: number, state: DataSourceState, lastError: string | null): Promise<void> {
    await this.db.query('update data_sources set state = $2, last_error = $3 where id = $1', [id, state, lastError]);
  }
}
