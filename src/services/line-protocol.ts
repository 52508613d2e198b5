// Line-protocol writes (POST /write, /api/v2/write) into a LINE_PROTOCOL source's points: each field
// value of a line goes to every point of the source whose measurement, field and locator tags match
// (the line's further tags are ignored). All or nothing: the body is parsed whole (400 naming a
// malformed line), every value's point is found or, with `createPoints`, made (else 422), permissions
// and types are checked, and only then is one batch handed to the ingest pipeline, which answers once
// the values are durable and readable.
import { createHash } from 'node:crypto';
import { DomainError } from '../core/errors.js';
import { KeyedFifoLock } from '../core/fifo-lock.js';
import {
  KIND_BOOLEAN,
  KIND_STRING,
  LineDomainError,
  LineProtocolError,
  parseLineProtocol,
  type FieldKind,
  type LineProtocolColumns,
  type Precision,
  type SeriesKey,
} from '../core/line-protocol.js';
import { TimeSlice } from '../core/time-slice.js';
import type { DataPointRecord, DataType } from '../store/metadata/data-points.js';
import type { DataSourceRecord } from '../store/metadata/data-sources.js';
import { emptyBatch } from '../values/batch.js';
import type { DataPointService } from './data-points.js';
import type { DataSourceService } from './data-sources.js';
import { hasPermission, type Principal } from './permissions.js';
import type { PointValueService } from './point-values.js';

const XID_MAX = 100;
const NAME_MAX = 255;
/** Rows between looks at the time slice. */
const SLICE_ROWS = 20_000;

/** A point's locator as stored for a LINE_PROTOCOL source. */
interface LineLocator {
  measurement: string;
  tags: Record<string, string>;
  field: string;
}

const DATA_TYPE_OF_KIND: Record<FieldKind, DataType> = { 0: 'NUMERIC', 1: 'NUMERIC', 2: 'NUMERIC', 3: 'BINARY', 4: 'ALPHANUMERIC' };
const KIND_NAME: Record<FieldKind, string> = { 0: 'float', 1: 'integer', 2: 'unsigned integer', 3: 'boolean', 4: 'string' };

/** Whether a point of this type takes a value of this kind (MULTISTATE: whole numbers only, checked per value). */
function takes(dataType: string, kind: FieldKind): boolean {
  switch (dataType) {
    case 'NUMERIC':
      return kind <= 2;
    case 'MULTISTATE':
      return kind <= 2;
    case 'BINARY':
      return kind === KIND_BOOLEAN;
    default:
      return kind === KIND_STRING;
  }
}

/** `LP_` + measurement, the tag values in key order and the field, joined by `_`; other characters as `_`. */
export function createdPointXid(series: SeriesKey, field: string): string {
  const tagValues = [...series.tags].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, v]) => v);
  const xid = ['LP', series.measurement, ...tagValues, field].join('_').replace(/[^A-Za-z0-9_.-]/g, '_');
  if (xid.length <= XID_MAX) return xid;
  // Too long for an XID: cut, with a digest of the whole so that two long series stay apart.
  return `${xid.slice(0, XID_MAX - 13)}_${createHash('sha256').update(xid).digest('hex').slice(0, 12)}`;
}

function describe(series: SeriesKey, field: string): string {
  return `${[series.measurement, ...series.tags.map(([k, v]) => `${k}=${v}`)].join(',')} ${field}`;
}

/** The points of one source by measurement and field, each with its locator tags. */
class PointIndex {
  private readonly byName = new Map<string, { tags: [string, string][]; point: DataPointRecord }[]>();

  constructor(points: readonly DataPointRecord[]) {
    for (const point of points) {
      const loc = point.pointLocator as unknown as LineLocator;
      const key = `${loc.measurement}\u0000${loc.field}`;
      let list = this.byName.get(key);
      if (!list) this.byName.set(key, (list = []));
      list.push({ tags: Object.entries(loc.tags ?? {}), point });
    }
  }

  match(series: SeriesKey, field: string): DataPointRecord[] {
    const candidates = this.byName.get(`${series.measurement}\u0000${field}`);
    if (!candidates) return [];
    const lineTags = new Map(series.tags);
    return candidates.filter((c) => c.tags.every(([k, v]) => lineTags.get(k) === v)).map((c) => c.point);
  }
}

/** A source's PointIndex, as its points were while PointValueService.pointsVersion had this value. */
interface CachedIndex {
  version: number;
  at: number;
  index: PointIndex;
}

/** Sources whose PointIndex is kept: line-protocol sources are few; more only cost a reload. */
const INDEXES_MAX = 64;

/** Each (series, field) pair of a body, at series × fieldKeys.length + field → the points it writes. */
type Pairs = (DataPointRecord[] | undefined)[];

interface Unknown {
  series: number;
  field: number;
  kind: FieldKind;
  line: number;
}

export class LineProtocolService {
  /** Points of a source are made one request at a time, so two writes of a new series make it once. */
  private readonly creating = new KeyedFifoLock<number>();
  /**
   * Each source's points by measurement and field, kept across writes: reading them for every body (a
   * metadata query and a record per point, on this thread with PGlite) was most of the metadata work
   * of a write (`npm run bench -- line-protocol`: PGlite 19 % of the service thread's time without,
   * 3 % with). Kept only while no point changed anywhere: a point saved,
   * created or deleted here (its listeners run before the API answers) or told by another instance
   * bumps the point-value facade's pointsVersion, as it evicts that facade's own point cache, and with
   * other instances an entry also expires as that cache's entries do.
   */
  private readonly indexes = new Map<number, CachedIndex>();

  constructor(
    private readonly sources: DataSourceService,
    private readonly points: DataPointService,
    private readonly values: PointValueService,
  ) {}

  /** Writes the body's values to the source `sourceXid`; resolves with their count once durable. */
  async write(user: Principal, sourceXid: string, body: Buffer, precision: Precision): Promise<number> {
    const ds = await this.sources.findByXid(sourceXid);
    if (!ds || ds.modelType !== 'LINE_PROTOCOL') throw DomainError.notFound(`Data source not found: ${sourceXid} (db or bucket names a LINE_PROTOCOL data source's XID)`);
    if (!ds.enabled) throw DomainError.invalid('db', `Data source ${sourceXid} is disabled: it accepts no writes`);
    let columns: LineProtocolColumns;
    try {
      columns = parseLineProtocol(body, precision);
    } catch (err) {
      if (err instanceof LineProtocolError) throw new LineDomainError('bad-request', err.line, `Malformed line protocol at line ${err.line}: ${err.reason}; nothing was written`);
      throw err;
    }
    if (columns.length === 0) return 0;
    const slice = new TimeSlice();
    let resolved = await this.resolve(ds, columns, slice);
    if (resolved.unknown.length > 0) {
      const first = resolved.unknown[0]!;
      const named = resolved.unknown.slice(0, 10).map((u) => describe(columns.seriesKeys[u.series]!, columns.fieldKeys[u.field]!));
      if (ds.settings.createPoints !== true) {
        throw new LineDomainError('invalid', first.line, `Unknown series at line ${first.line} (data source ${ds.xid} has createPoints false): ${named.join('; ')}; nothing was written`);
      }
      if (!this.sources.mayEdit(user, ds)) throw DomainError.accessDenied(`Access denied: creating points (${named.join('; ')}) needs edit permission on data source ${ds.xid}`);
      this.assertMaySet(user, resolved.matched);
      resolved = await this.creating.run(ds.id, async () => {
        const again = await this.resolve(ds, columns, slice);
        for (const u of again.unknown) await this.create(user, ds, columns.seriesKeys[u.series]!, columns.fieldKeys[u.field]!, u.kind);
        return this.resolve(ds, columns, slice);
      });
      if (resolved.unknown.length > 0) throw new DomainError('unavailable', 'Points created for this write went away before it was written; write again');
    }
    this.assertMaySet(user, resolved.matched);
    return this.writeRows(columns, resolved.pairs, slice);
  }

  private assertMaySet(user: Principal, points: ReadonlyMap<number, DataPointRecord>): void {
    const denied: string[] = [];
    for (const p of points.values()) if (!(hasPermission(user, p.readPermission) && hasPermission(user, p.setPermission))) denied.push(p.xid);
    if (denied.length > 0) throw DomainError.accessDenied(`Access denied: writing values needs read and set permission on ${denied.slice(0, 10).join(', ')}`);
  }

  /**
   * Each (series, field) pair of the body → the points it writes, from the source's points as stored
   * now; the pairs that match none; type conflicts and timestamps the store cannot keep refused (422
   * naming the line), before any point is made.
   */
  private async resolve(ds: DataSourceRecord, c: LineProtocolColumns, slice: TimeSlice) {
    const index = await this.pointIndex(ds.id);
    const fieldCount = c.fieldKeys.length;
    // Indexed by series × fields + field: an array, as a Map lookup per row costs more than the rest of the row.
    const pairs: Pairs = [];
    const matched = new Map<number, DataPointRecord>();
    const unknown: Unknown[] = [];
    /** Per pair no point matches: the data type its first value would give the point made for it. */
    const unknownType = new Map<number, DataType>();
    const { min, max } = this.values.timeRange;
    for (let i = 0; i < c.length; i++) {
      if (i % SLICE_ROWS === 0) await slice.yieldIfExpired();
      const ts = c.timestamps[i]!;
      if (ts < min || ts > max) throw new LineDomainError('invalid', c.lines[i]!, `Timestamp at line ${c.lines[i]} is outside what the store keeps (${new Date(min).toISOString()} to ${new Date(max).toISOString()}); nothing was written`);
      const key = c.series[i]! * fieldCount + c.fields[i]!;
      const kind = c.kinds[i] as FieldKind;
      let targets = pairs[key];
      if (!targets) {
        targets = index.match(c.seriesKeys[c.series[i]!]!, c.fieldKeys[c.fields[i]!]!);
        pairs[key] = targets;
        if (targets.length === 0) {
          unknown.push({ series: c.series[i]!, field: c.fields[i]!, kind, line: c.lines[i]! });
          unknownType.set(key, DATA_TYPE_OF_KIND[kind]);
        }
        for (const p of targets) matched.set(p.id, p);
      }
      if (targets.length === 0 && unknownType.get(key) !== DATA_TYPE_OF_KIND[kind]) {
        throw new LineDomainError('invalid', c.lines[i]!, `Field type conflict at line ${c.lines[i]}: ${describe(c.seriesKeys[c.series[i]!]!, c.fieldKeys[c.fields[i]!]!)} is a ${KIND_NAME[kind]} here and ${unknownType.get(key)} before; nothing was written`);
      }
      for (const p of targets) {
        if (!takes(p.dataType, kind) || (p.dataType === 'MULTISTATE' && !Number.isSafeInteger(c.values[i]))) {
          throw new LineDomainError('invalid', c.lines[i]!, `Field type conflict at line ${c.lines[i]}: ${describe(c.seriesKeys[c.series[i]!]!, c.fieldKeys[c.fields[i]!]!)} is a ${KIND_NAME[kind]}, point ${p.xid} is ${p.dataType}; nothing was written`);
        }
      }
    }
    return { pairs, matched, unknown };
  }

  /** The source's points by measurement and field: cached while no point has changed (see `indexes`). */
  private async pointIndex(sourceId: number): Promise<PointIndex> {
    const version = this.values.pointsVersion;
    const ttl = this.values.pointCacheTtlMs;
    const cached = this.indexes.get(sourceId);
    const now = Date.now();
    if (cached && cached.version === version && (ttl === 0 || now - cached.at < ttl)) return cached.index;
    const index = new PointIndex(await this.points.forSource(sourceId));
    // Read across a change: this write uses it (as it would have without a cache); the next one reads again.
    if (this.values.pointsVersion === version) {
      this.indexes.delete(sourceId);
      if (this.indexes.size >= INDEXES_MAX) this.indexes.delete(this.indexes.keys().next().value!);
      this.indexes.set(sourceId, { version, at: now, index });
    }
    return index;
  }

  /** Makes the point a series' field writes: its locator names the line's tags; set permission for the source's editors. */
  private async create(user: Principal, ds: DataSourceRecord, series: SeriesKey, field: string, kind: FieldKind): Promise<void> {
    const xid = createdPointXid(series, field);
    const existing = await this.points.findByXid(xid);
    if (existing) {
      if (existing.dataSourceId !== ds.id) throw DomainError.conflict(`Cannot create point ${xid} for ${describe(series, field)}: the XID is in use by another data source's point`);
      throw DomainError.conflict(`Cannot create point ${xid} for ${describe(series, field)}: a point with that XID exists and does not match the series (edit its locator)`);
    }
    const name = [series.measurement, ...series.tags.map(([, v]) => v), field].join(' ').slice(0, NAME_MAX);
    await this.points.create(user, {
      xid,
      name,
      dataSourceXid: ds.xid,
      pointLocator: { dataType: DATA_TYPE_OF_KIND[kind], settable: false, measurement: series.measurement, tags: Object.fromEntries(series.tags), field },
      setPermission: ds.editPermission,
    });
  }

  /** One batch of every row for every point it matched, through the ingest pipeline (durable when it resolves). */
  private async writeRows(c: LineProtocolColumns, pairs: Pairs, slice: TimeSlice): Promise<number> {
    const fieldCount = c.fieldKeys.length;
    let n = 0;
    for (let i = 0; i < c.length; i++) n += pairs[c.series[i]! * fieldCount + c.fields[i]!]!.length;
    const batch = emptyBatch(n);
    const points = new Map<number, DataPointRecord>();
    let row = 0;
    let lastKey = -1;
    let targets: DataPointRecord[] = [];
    for (let i = 0; i < c.length; i++) {
      if (i % SLICE_ROWS === 0) await slice.yieldIfExpired();
      const ts = c.timestamps[i]!;
      const key = c.series[i]! * fieldCount + c.fields[i]!;
      if (key !== lastKey) {
        targets = pairs[key]!;
        lastKey = key;
        for (const p of targets) points.set(p.id, p);
      }
      const kind = c.kinds[i]!;
      for (const p of targets) {
        batch.series[row] = p.id;
        batch.ts[row] = ts;
        if (kind === KIND_STRING) {
          batch.value[row] = NaN;
          (batch.text ??= new Array<string | null>(n).fill(null))[row] = c.strings![i]!;
        } else batch.value[row] = c.values[i]!;
        row++;
      }
    }
    await this.values.writeBatch(batch, points);
    return n;
  }
}
