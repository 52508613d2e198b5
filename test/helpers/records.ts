// Data point and data source records as the store returns them, for tests and benches that hand them
// to a driver, the ingest pipeline or a logger without a store (bench/ imports this too). A caller
// names only the fields its case is about; the rest are a plain VIRTUAL source's, with the service's
// default point settings.
import { DEFAULT_POINT_SETTINGS, NO_WARNING } from '../../src/services/data-points.js';
import type { DataPointRecord } from '../../src/store/metadata/data-points.js';
import type { DataSourceRecord } from '../../src/store/metadata/data-sources.js';

/** A NUMERIC, not settable point `DP_<id>` of VIRTUAL source 1 (XID DS), unless `fields` say otherwise. */
export function pointRecord(fields: Partial<DataPointRecord> = {}): DataPointRecord {
  const id = fields.id ?? 1;
  return {
    id,
    xid: `DP_${id}`,
    name: 'p',
    enabled: true,
    deviceName: '',
    dataSourceId: 1,
    dataSourceXid: 'DS',
    dataSourceName: 'ds',
    dataSourceType: 'VIRTUAL',
    dataType: 'NUMERIC',
    settable: false,
    pointLocator: {},
    unit: '',
    tags: {},
    rollup: 'NONE',
    readPermission: [],
    editPermission: [],
    setPermission: [],
    ...DEFAULT_POINT_SETTINGS,
    ...NO_WARNING,
    ...fields,
  };
}

/** A RUNNING, enabled VIRTUAL source 1 (XID DS) updated every second, unless `fields` say otherwise. */
export function sourceRecord(fields: Partial<DataSourceRecord> = {}): DataSourceRecord {
  return {
    id: 1,
    xid: 'DS',
    name: 'ds',
    enabled: true,
    modelType: 'VIRTUAL',
    updatePeriods: 1,
    updatePeriodType: 'SECONDS',
    readPermission: [],
    editPermission: [],
    settings: {},
    state: 'RUNNING',
    lastError: null,
    lastErrorTimestamp: null,
    lastErrorCleared: false,
    runningOn: null,
    ...fields,
  };
}
