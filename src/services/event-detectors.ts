// Event detectors: settings checked per detector type against the point's data type.
import { compilePattern, isPatternError } from '../core/bounded-regex.js';
import { DomainError, validationMessage, type ValidationMessage } from '../core/errors.js';
import { detectorFromMango } from '../core/mango-input.js';
import { TimeSlice } from '../core/time-slice.js';
import type { Validator } from '../core/validation.js';
import type { DataPointRecord } from '../store/metadata/data-points.js';
import {
  eventDetectorResource,
  type AlarmLevel,
  type DetectorSettings,
  type DetectorType,
  type EventDetectorRecord,
  type EventDetectorsRepository,
} from '../store/metadata/event-detectors.js';
import type { DataPointService } from './data-points.js';
import { assertPermission, hasPermission, normaliseRoles, USER_ROLE, type Principal } from './permissions.js';
import { generateXid, listQuery, translateDuplicateXid, type ListResult } from './resources.js';

const OBJECT_TYPE = 'EventDetectorVO';

export interface EventDetectorInput extends DetectorSettings {
  xid?: string;
  name?: string;
  dataPointXid: string;
  detectorType: DetectorType;
  alarmLevel: AlarmLevel;
  readPermission?: string[];
  editPermission?: string[];
}

export function eventDetectorView(d: EventDetectorRecord): Record<string, unknown> {
  return {
    id: d.id,
    xid: d.xid,
    name: d.name,
    dataPointXid: d.dataPointXid,
    detectorType: d.detectorType,
    alarmLevel: d.alarmLevel,
    ...d.config,
    readPermission: d.readPermission,
    editPermission: d.editPermission,
  };
}

/** The settings a detector type uses, checked against the point; returns the stored config. */
function detectorConfig(input: EventDetectorInput, point: DataPointRecord): Record<string, unknown> {
  const problems: ValidationMessage[] = [];
  const needs = (dataType: string) => {
    if (point.dataType !== dataType) problems.push(validationMessage('dataPointXid', `must be a ${dataType} point for ${input.detectorType}`));
  };
  const config: Record<string, unknown> = { rtnApplicable: input.rtnApplicable ?? true };
  if (input.durationMs !== undefined) config.durationMs = input.durationMs;
  switch (input.detectorType) {
    case 'HIGH_LIMIT':
    case 'LOW_LIMIT': {
      needs('NUMERIC');
      config.limit = input.limit;
      if (input.resetLimit !== undefined) {
        const high = input.detectorType === 'HIGH_LIMIT';
        if (high ? input.resetLimit > input.limit! : input.resetLimit < input.limit!) {
          problems.push(validationMessage('resetLimit', high ? 'must be less than or equal to limit' : 'must be greater than or equal to limit'));
        }
        config.resetLimit = input.resetLimit;
      }
      break;
    }
    case 'RANGE':
      needs('NUMERIC');
      if (input.low! > input.high!) problems.push(validationMessage('high', 'must be greater than or equal to low'));
      Object.assign(config, { low: input.low, high: input.high });
      break;
    case 'BINARY_STATE':
      needs('BINARY');
      if (typeof input.state !== 'boolean') problems.push(validationMessage('state', 'must be true or false'));
      config.state = input.state;
      break;
    case 'MULTISTATE_STATE':
      needs('MULTISTATE');
      if (typeof input.state !== 'number') problems.push(validationMessage('state', 'must be an integer'));
      config.state = input.state;
      break;
    case 'ALPHANUMERIC_REGEX_STATE': {
      needs('ALPHANUMERIC');
      const pattern = compilePattern(String(input.state));
      if (isPatternError(pattern)) problems.push(validationMessage('state', pattern.error));
      config.state = input.state;
      break;
    }
    case 'NO_UPDATE':
      if (!(input.durationMs! > 0)) problems.push(validationMessage('durationMs', 'must be greater than 0'));
      break;
  }
  if (problems.length > 0) throw DomainError.validation(problems, OBJECT_TYPE);
  return config;
}

const notFound = () => DomainError.notFound('Event detector not found');

/** Something that must follow detector changes (the detector runtime). */
/** Awaited before the API answers: a value written right after creating a detector is evaluated by it. */
export interface EventDetectorListener {
  detectorCreated(detector: EventDetectorRecord): Promise<void> | void;
  detectorUpdated(detector: EventDetectorRecord, before: EventDetectorRecord): Promise<void> | void;
  detectorDeleted(detector: EventDetectorRecord): Promise<void> | void;
  /** Many saved at once (a configuration import); a listener without it hears each as created or updated. */
  detectorsSaved?(saved: readonly SavedDetector[]): Promise<void> | void;
}

/** Where a detector's point is found: the point service, or a caller's lookup (an import's, a chunk at a time). */
export type PointLookup = Pick<DataPointService, 'findByXid' | 'findById'>;

/** A detector as saved, and as it was before (undefined: created). */
export interface SavedDetector {
  saved: EventDetectorRecord;
  before: EventDetectorRecord | undefined;
}

export class EventDetectorService {
  private readonly listeners: EventDetectorListener[] = [];

  onChange(listener: EventDetectorListener): void {
    this.listeners.push(listener);
  }

  constructor(
    private readonly repo: EventDetectorsRepository,
    private readonly points: DataPointService,
    private readonly validator: Validator,
  ) {}

  async list(user: Principal, rawQuery: string): Promise<ListResult<EventDetectorRecord>> {
    // A detector tells its point's XID and limits: it is listed only to those who may read the point too.
    const q = listQuery(user, eventDetectorResource, rawQuery, ['t.read_permission', 'p.read_permission']);
    return { total: await this.repo.count(q), batches: this.repo.page(q) };
  }

  /** A detector is readable with its own read permission and its point's (it inherits the point's). */
  async get(user: Principal, xid: string): Promise<EventDetectorRecord> {
    const d = await this.repo.findOne('xid', xid);
    if (!d) throw notFound();
    await this.readablePoint(user, d);
    return d;
  }

  /** Asserts the user may read the detector and its point (it inherits the point's); returns the point. */
  private async readablePoint(user: Principal, d: EventDetectorRecord, points: PointLookup = this.points): Promise<DataPointRecord | undefined> {
    assertPermission(user, d.readPermission);
    const point = await points.findById(d.dataPointId);
    if (point) assertPermission(user, point.readPermission);
    return point;
  }

  /** The body read and validated: Mango's names for the point (`sourceId`) and the duration taken too. */
  private async input(body: unknown, points: PointLookup): Promise<EventDetectorInput> {
    const mango = detectorFromMango(body);
    if (mango.source) {
      const point = await points.findById(mango.source.sourceId);
      if (!point) throw DomainError.invalid('sourceId', 'Data point not found', 'EventDetectorVO');
      (mango.body as Record<string, unknown>).dataPointXid = point.xid;
    }
    return this.validator.validate<EventDetectorInput>('event-detector', mango.body);
  }

  /** A detector by id, without a permission check: for what runs on the service's own behalf (event handlers). */
  findById(id: number): Promise<EventDetectorRecord | undefined> {
    return this.repo.findOne('id', id);
  }

  /** Detectors of a point, for the runtime. */
  forPoint(pointId: number): Promise<EventDetectorRecord[]> {
    return this.repo.findAll('dataPointId', pointId);
  }

  async create(user: Principal, body: unknown): Promise<EventDetectorRecord> {
    const created = await this.repo.insert(await this.newRecord(user, body)).catch((err: unknown) => {
      throw translateDuplicateXid(err);
    });
    for (const l of this.listeners) await l.detectorCreated(created);
    return created;
  }

  /** What create stores for `body`, checked as create checks it; nothing is written. `points`: where its point is found. */
  async newRecord(user: Principal, body: unknown, points: PointLookup = this.points): Promise<Partial<EventDetectorRecord>> {
    const input = await this.input(body, points);
    const point = await this.editablePoint(user, input.dataPointXid, points);
    return {
      xid: input.xid ?? generateXid('ED'),
      name: input.name ?? '',
      dataPointId: point.id,
      dataPointXid: point.xid,
      detectorType: input.detectorType,
      alarmLevel: input.alarmLevel,
      config: detectorConfig(input, point),
      readPermission: normaliseRoles(input.readPermission ?? [USER_ROLE]),
      editPermission: normaliseRoles(input.editPermission ?? []),
    };
  }

  async update(user: Principal, xid: string, body: unknown): Promise<EventDetectorRecord> {
    const existing = await this.getForEdit(user, xid);
    const saved = await this.repo.update(existing.id, await this.changesTo(user, existing, body)).catch((err: unknown) => {
      throw translateDuplicateXid(err);
    });
    if (!saved) throw notFound();
    for (const l of this.listeners) await l.detectorUpdated(saved, existing);
    return saved;
  }

  /**
   * What update stores over `existing` for `body`, checked as update checks it (the edit permission on
   * the detector is the caller's to check); nothing is written.
   */
  async changesTo(user: Principal, existing: EventDetectorRecord, body: unknown, points: PointLookup = this.points): Promise<Partial<EventDetectorRecord>> {
    const input = await this.input(body, points);
    // The detector's own edit permission suffices while it stays on its point; moving it to
    // another point needs edit permission there, as creating it would.
    const point =
      input.dataPointXid === existing.dataPointXid
        ? await points.findById(existing.dataPointId)
        : await this.editablePoint(user, input.dataPointXid, points);
    if (!point) throw notFound();
    return {
      xid: input.xid ?? existing.xid,
      name: input.name ?? existing.name,
      dataPointId: point.id,
      dataPointXid: point.xid,
      detectorType: input.detectorType,
      alarmLevel: input.alarmLevel,
      config: detectorConfig(input, point),
      readPermission: normaliseRoles(input.readPermission ?? existing.readPermission),
      editPermission: normaliseRoles(input.editPermission ?? existing.editPermission),
    };
  }

  /** Detectors saved by other means (a configuration import): the listeners hear them as if saved here, at once. */
  async announceSaved(detectors: readonly SavedDetector[]): Promise<void> {
    const slice = new TimeSlice();
    for (const l of this.listeners) {
      if (l.detectorsSaved) await l.detectorsSaved(detectors);
      else {
        for (const { saved, before } of detectors) {
          await (before ? l.detectorUpdated(saved, before) : l.detectorCreated(saved));
          await slice.yieldIfExpired();
        }
      }
    }
  }

  async delete(user: Principal, xid: string): Promise<EventDetectorRecord> {
    const existing = await this.getForEdit(user, xid);
    await this.repo.delete(existing.id);
    for (const l of this.listeners) await l.detectorDeleted(existing);
    return existing;
  }

  /** Editing a detector needs its own edit permission or the edit permission of its point. */
  private async getForEdit(user: Principal, xid: string): Promise<EventDetectorRecord> {
    const d = await this.repo.findOne('xid', xid);
    if (!d) throw notFound();
    await this.checkEdit(user, d);
    return d;
  }

  /** May the user edit this stored detector: read permission on it and its point, edit permission on either. */
  async checkEdit(user: Principal, d: EventDetectorRecord, points: PointLookup = this.points): Promise<void> {
    const point = await this.readablePoint(user, d, points);
    const allowed = hasPermission(user, d.editPermission) || (point !== undefined && (await this.points.mayEdit(user, point)));
    if (!allowed) throw DomainError.accessDenied();
  }

  private async editablePoint(user: Principal, xid: string, points: PointLookup): Promise<DataPointRecord> {
    const point = await points.findByXid(xid);
    if (!point) throw DomainError.invalid('dataPointXid', 'Data point not found', OBJECT_TYPE);
    if (!(await this.points.mayEdit(user, point))) throw DomainError.accessDenied();
    return point;
  }
}
