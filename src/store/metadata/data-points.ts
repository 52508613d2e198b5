// Data points table (joined with its source for dataSourceXid) and its RQL properties.
import type { ResourceDef, SqlQueryParts } from '../../core/rql/index.js';
import { CrudRepository, readInIdPages } from './crud.js';
import type { TextRenderer } from '../../core/text-renderer.js';
import type { Queryable } from './db.js';

export const DATA_TYPES = ['NUMERIC', 'BINARY', 'MULTISTATE', 'ALPHANUMERIC'] as const;
export type DataType = (typeof DATA_TYPES)[number];

export interface DataPointRecord {
  [key: string]: unknown;
  id: number;
  xid: string;
  name: string;
  enabled: boolean;
  deviceName: string;
  dataSourceId: number;
  dataSourceXid: string;
  dataSourceName: string;
  dataSourceType: string;
  dataType: DataType;
  settable: boolean;
  /** Type-specific locator without dataType and settable (those have columns of their own). */
  pointLocator: Record<string, unknown>;
  unit: string;
  /** How its values are written for people (core/text-renderer.ts). */
  textRenderer: TextRenderer;
  tags: Record<string, string>;
  rollup: string;
  readPermission: string[];
  editPermission: string[];
  setPermission: string[];
  /** Normalised by the service: every field present (values/ingest/logging.ts). */
  loggingProperties: LoggingProperties;
  purgeOverride: boolean;
  purgePeriod: Period;
  /** The last value its source could not read for it (runtime state, runtime/point-warnings.ts). */
  lastWarning: string | null;
  lastWarningTimestamp: number | null;
  /** A good value has arrived since lastWarning. */
  lastWarningCleared: boolean;
}

/** A point's warning as the runtime stores it. */
export interface PointWarning {
  message: string;
  timestamp: number;
  cleared: boolean;
}

export const LOGGING_TYPES = ['ON_CHANGE', 'ALL', 'ON_TS_CHANGE', 'INTERVAL', 'NONE'] as const;
export const INTERVAL_LOGGING_TYPES = ['INSTANT', 'MAXIMUM', 'MINIMUM', 'AVERAGE'] as const;

/** A length of time as Mango writes it: {"periods": 15, "type": "MINUTES"}. */
export interface Period {
  periods: number;
  type: string;
}

export interface LoggingProperties {
  loggingType: (typeof LOGGING_TYPES)[number];
  tolerance: number;
  intervalLoggingPeriod: Period;
  intervalLoggingType: (typeof INTERVAL_LOGGING_TYPES)[number];
  discardExtremeValues: boolean;
  discardLowLimit: number;
  discardHighLimit: number;
}

export const dataPointResource: ResourceDef = {
  name: 'data points',
  properties: {
    id: { column: 't.id', type: 'integer' },
    xid: { column: 't.xid', type: 'string' },
    name: { column: 't.name', type: 'string' },
    enabled: { column: 't.enabled', type: 'boolean' },
    deviceName: { column: 't.device_name', type: 'string' },
    dataSourceXid: { column: 's.xid', type: 'string' },
    dataType: { column: 't.data_type', type: 'enum', values: DATA_TYPES },
    settable: { column: 't.settable', type: 'boolean' },
    unit: { column: 't.unit', type: 'string' },
  },
  mapColumn: { prefix: 'tags', column: 't.tags' },
  tiebreak: 't.id',
};

/** What retention needs of a point. */
export interface PointRetention {
  id: number;
  xid: string;
  purgeOverride: boolean;
  purgePeriod: Period;
}

/** Rows of the retention read per statement: narrow rows, so more than READ_PAGE (crud.ts). */
const RETENTION_PAGE = 500;

export class DataPointsRepository extends CrudRepository<DataPointRecord> {
  /** Every point's retention settings (one small row each), read RETENTION_PAGE at a time. */
  retention(): Promise<PointRetention[]> {
    return readInIdPages(
      (after, limit) =>
        this.db.query<PointRetention & Record<string, unknown>>(
          'select id, xid, purge_override as "purgeOverride", purge_period as "purgePeriod" from data_points where id > $1 order by id limit $2',
          [after, limit],
        ),
      RETENTION_PAGE,
    );
  }

  /**
   * The XID, name and device name of each point `q` selects, in its order and window, as one JSON
   * array text of `[xid, name, deviceName]` built by the server: one row to decode however many
   * points (a page of whole records per statement took 4.6 s for 10,000 points on PGlite).
   */
  async labels(q: SqlQueryParts): Promise<string> {
    const values = [...q.values, q.limit, q.offset];
    const rows = await this.db.query<{ json: string }>(
      `select coalesce(json_agg(json_build_array(xid, name, device) order by n), '[]')::text as "json" from (
         select t.xid, t.name, t.device_name as device, row_number() over (order by ${q.orderBy}) as n
         from data_points t join data_sources s on s.id = t.data_source_id
         where ${q.where} order by ${q.orderBy} limit $${values.length - 1} offset $${values.length}
       ) found`,
      values,
    );
    return rows[0]!.json;
  }

  /** Runtime state, written by the data source runtime (not a change of the point's configuration). */
  async setWarning(id: number, w: PointWarning): Promise<void> {
    await this.db.query('update data_points set last_warning = $2, last_warning_ts = $3, last_warning_cleared = $4 where id = $1', [id, w.message, w.timestamp, w.cleared]);
  }

  /**
   * Stores `tags` on point `id` if its tags are still `expected` (compared as JSON values); false
   * when they changed meanwhile or the point is gone.
   */
  async replaceTags(id: number, expected: Record<string, string>, tags: Record<string, string>): Promise<boolean> {
    const rows = await this.db.query('update data_points set tags = $3::jsonb where id = $1 and tags = $2::jsonb returning id', [
      id,
      JSON.stringify(expected),
      JSON.stringify(tags),
    ]);
    return rows.length > 0;
  }

  constructor(db: Queryable) {
    super(db, {
      table: 'data_points',
      from: 'data_points t join data_sources s on s.id = t.data_source_id',
      read: {
        id: 't.id',
        xid: 't.xid',
        name: 't.name',
        enabled: 't.enabled',
        deviceName: 't.device_name',
        dataSourceId: 't.data_source_id',
        dataSourceXid: 's.xid',
        dataSourceName: 's.name',
        dataSourceType: 's.model_type',
        dataType: 't.data_type',
        settable: 't.settable',
        pointLocator: 't.point_locator',
        unit: 't.unit',
        textRenderer: 't.text_renderer',
        tags: 't.tags',
        rollup: 't.rollup',
        readPermission: 't.read_permission',
        editPermission: 't.edit_permission',
        setPermission: 't.set_permission',
        loggingProperties: 't.logging_properties',
        purgeOverride: 't.purge_override',
        purgePeriod: 't.purge_period',
        lastWarning: 't.last_warning',
        lastWarningTimestamp: 't.last_warning_ts',
        lastWarningCleared: 't.last_warning_cleared',
      },
      write: {
        xid: 'xid',
        name: 'name',
        enabled: 'enabled',
        deviceName: 'device_name',
        dataSourceId: 'data_source_id',
        dataType: 'data_type',
        settable: 'settable',
        pointLocator: 'point_locator',
        unit: 'unit',
        textRenderer: 'text_renderer',
        tags: 'tags',
        rollup: 'rollup',
        readPermission: 'read_permission',
        editPermission: 'edit_permission',
        setPermission: 'set_permission',
        loggingProperties: 'logging_properties',
        purgeOverride: 'purge_override',
        purgePeriod: 'purge_period',
      },
      json: ['pointLocator', 'textRenderer', 'tags', 'loggingProperties', 'purgePeriod'],
    });
  }
}
