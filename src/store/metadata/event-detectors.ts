// Event detectors table (joined with its point for dataPointXid) and its RQL properties.
import type { ResourceDef } from '../../core/rql/index.js';
import { CrudRepository } from './crud.js';
import type { Queryable } from './db.js';

export const DETECTOR_TYPES = ['HIGH_LIMIT', 'LOW_LIMIT', 'RANGE', 'BINARY_STATE', 'MULTISTATE_STATE', 'ALPHANUMERIC_REGEX_STATE', 'NO_UPDATE'] as const;
export type DetectorType = (typeof DETECTOR_TYPES)[number];
export const ALARM_LEVELS = ['NONE', 'INFORMATION', 'IMPORTANT', 'WARNING', 'URGENT', 'CRITICAL', 'LIFE_SAFETY'] as const;
export type AlarmLevel = (typeof ALARM_LEVELS)[number];

/** The type-specific settings a detector keeps in `config` (which ones depend on its type). */
export interface DetectorSettings {
  limit?: number;
  resetLimit?: number;
  low?: number;
  high?: number;
  /** BINARY_STATE: boolean; MULTISTATE_STATE: number; ALPHANUMERIC_REGEX_STATE: a pattern (core/bounded-regex.ts). */
  state?: number | boolean | string;
  durationMs?: number;
  rtnApplicable?: boolean;
}

export interface EventDetectorRecord {
  [key: string]: unknown;
  id: number;
  xid: string;
  name: string;
  dataPointId: number;
  dataPointXid: string;
  detectorType: DetectorType;
  alarmLevel: AlarmLevel;
  /** limit, resetLimit, low, high, state, durationMs, rtnApplicable. */
  config: Record<string, unknown>;
  readPermission: string[];
  editPermission: string[];
}

export const eventDetectorResource: ResourceDef = {
  name: 'event detectors',
  properties: {
    id: { column: 't.id', type: 'integer' },
    xid: { column: 't.xid', type: 'string' },
    name: { column: 't.name', type: 'string' },
    dataPointXid: { column: 'p.xid', type: 'string' },
    detectorType: { column: 't.detector_type', type: 'enum', values: DETECTOR_TYPES },
    alarmLevel: { column: 't.alarm_level', type: 'enum', values: ALARM_LEVELS },
  },
  tiebreak: 't.id',
};

export class EventDetectorsRepository extends CrudRepository<EventDetectorRecord> {
  constructor(db: Queryable) {
    super(db, {
      table: 'event_detectors',
      from: 'event_detectors t join data_points p on p.id = t.data_point_id',
      read: {
        id: 't.id',
        xid: 't.xid',
        name: 't.name',
        dataPointId: 't.data_point_id',
        dataPointXid: 'p.xid',
        detectorType: 't.detector_type',
        alarmLevel: 't.alarm_level',
        config: 't.config',
        readPermission: 't.read_permission',
        editPermission: 't.edit_permission',
      },
      write: {
        xid: 'xid',
        name: 'name',
        dataPointId: 'data_point_id',
        detectorType: 'detector_type',
        alarmLevel: 'alarm_level',
        config: 'config',
        readPermission: 'read_permission',
        editPermission: 'edit_permission',
      },
      json: ['config'],
    });
  }
}
