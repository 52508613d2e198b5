// Point-value reads as tables of typed columns (column-table.ts), for the Arrow and Parquet answers:
// `timestamp`, then `value` (raw values, with `annotation`; a rollup's statistic) or one column per
// statistic (ALL), typed by the point's data type; several points in long form, a dictionary-encoded
// `xid` column first. Each store batch or computed chunk of periods becomes a batch of columns.
import { readAhead } from '../core/read-ahead.js';
import type { TimeSlice } from '../core/time-slice.js';
import type { PointValueService } from '../services/point-values.js';
import type { DataPointRecord } from '../store/metadata/data-points.js';
import type { StoredValue } from '../store/values/types.js';
import { StatisticsPresenter, type StatisticRollup } from '../values/read/statistics.js';
import type { ColumnBatch, ColumnCells, ColumnKind, TableColumn, TableSchema } from './column-table.js';
import type { ReadQuery } from './point-value-reads.js';

/** Periods per batch: a computed chunk is cut into batches of at most this many. */
const PERIODS_PER_BATCH = 65_536;
/** Rows per batch of a merge of several points (single array). */
const MERGED_ROWS = 8_192;

/** The type of a point's values: NUMERIC float64, BINARY bool, MULTISTATE int32, ALPHANUMERIC utf8. */
export function valueKind(dataType: string): ColumnKind {
  switch (dataType) {
    case 'BINARY':
      return 'bool';
    case 'MULTISTATE':
      return 'int32';
    case 'ALPHANUMERIC':
      return 'utf8';
    default:
      return 'float64';
  }
}

/** One point's columns after `timestamp` (and `xid`): raw values, or the rollup's statistic(s). */
export function pointColumns(point: DataPointRecord, rollup: StatisticRollup | undefined): TableColumn[] {
  if (!rollup) {
    return [
      { name: 'value', kind: valueKind(point.dataType), nullable: true },
      { name: 'annotation', kind: 'utf8', nullable: true },
    ];
  }
  const presenter = new StatisticsPresenter(rollup, point.dataType);
  const kindOf = (field: string): ColumnKind => statisticKind(point.dataType, field);
  if (!presenter.all) return [{ name: 'value', kind: kindOf(presenter.members[0]!), nullable: true }];
  return presenter.members.map((field) => ({ name: field, kind: kindOf(field), nullable: field !== 'count' }));
}

/** A statistic's type: counts are int32, a NUMERIC point's statistics float64, the others' values as stored. */
function statisticKind(dataType: string, field: string): ColumnKind {
  if (field === 'count') return 'int32';
  return valueKind(dataType);
}

/** Why several points cannot share one Arrow or Parquet table. */
export const SHARED_TABLE_PROBLEM =
  "The points' value columns differ (data types or rollups): an Arrow or Parquet table has the same columns for every point; ask for points of one data type and rollup, or for JSON";

/** The table of one or several points (`long`: with the `xid` column), or undefined when the points' columns differ. */
export function tableSchema(points: readonly { point: DataPointRecord; rollup: StatisticRollup | undefined }[], long: boolean): TableSchema | undefined {
  const each = points.map((p) => pointColumns(p.point, p.rollup));
  const signature = (columns: TableColumn[]) => columns.map((c) => `${c.name}:${c.kind}`).join(',');
  if (new Set(each.map(signature)).size > 1) return undefined;
  const columns: TableColumn[] = [...(long ? [{ name: 'xid', kind: 'xid' as const, nullable: false }] : []), { name: 'timestamp', kind: 'timestamp', nullable: false }, ...each[0]!];
  return { columns, xids: points.map((p) => p.point.xid) };
}

/** Cells of `kind` for `n` rows. */
function emptyCells(kind: ColumnKind, n: number): ColumnCells {
  return kind === 'utf8' ? new Array<string | null>(n).fill(null) : kind === 'xid' ? new Int32Array(n) : new Float64Array(n);
}

/** Raw values as a batch (the leading `xid` column when `xid` is given). */
export function rawBatch(point: DataPointRecord, values: readonly StoredValue[], xid: number | undefined): ColumnBatch {
  const n = values.length;
  const ts = new Float64Array(n);
  const text = point.dataType === 'ALPHANUMERIC';
  const value = text ? new Array<string | null>(n) : new Float64Array(n);
  const annotation = new Array<string | null>(n);
  for (let i = 0; i < n; i++) {
    const v = values[i]!;
    ts[i] = v.ts;
    if (text) (value as (string | null)[])[i] = v.text;
    else (value as Float64Array)[i] = v.value ?? NaN;
    annotation[i] = v.annotation;
  }
  const cells: ColumnCells[] = [ts, value, annotation];
  if (xid !== undefined) cells.unshift(new Int32Array(n).fill(xid));
  return { length: n, cells };
}

/** Raw values in [from, to) (at most q.limit), a store batch at a time. */
export async function* rawBatches(values: PointValueService, point: DataPointRecord, q: ReadQuery, xid: number | undefined, slice: TimeSlice): AsyncGenerator<ColumnBatch> {
  for await (const batch of readAhead(values.range(point, q.from, q.to, q.limit))) {
    yield rawBatch(point, batch, xid);
    await slice.yieldIfExpired();
  }
}

/** Rolled-up periods (at most `limit`), a computed chunk (cut to PERIODS_PER_BATCH) at a time. */
export async function* rollupBatches(
  values: PointValueService,
  point: DataPointRecord,
  q: ReadQuery,
  rollup: StatisticRollup,
  xid: number | undefined,
  slice: TimeSlice,
  limit = Infinity,
): AsyncGenerator<ColumnBatch> {
  if (!q.plan) return;
  const presenter = new StatisticsPresenter(rollup, point.dataType);
  const columns = pointColumns(point, rollup);
  const fields = presenter.members;
  let left = limit;
  for await (const result of values.rollup(point, q.plan, q.now, slice)) {
    const n = Math.min(result.length, left);
    for (let first = 0; first < n; first += PERIODS_PER_BATCH) {
      const end = Math.min(n, first + PERIODS_PER_BATCH);
      const rows = end - first;
      const cells: ColumnCells[] = [result.bounds.slice(first, end)];
      for (let c = 0; c < columns.length; c++) {
        const field = fields[c]!;
        const column = emptyCells(columns[c]!.kind, rows);
        if (Array.isArray(column)) for (let i = 0; i < rows; i++) column[i] = presenter.value(result, first + i, field) as string | null;
        // A value column is never the xid kind: its cells are a Float64Array, filled column-wise.
        else presenter.numbers(result, field, first, end, column as Float64Array);
        cells.push(column);
      }
      if (xid !== undefined) cells.unshift(new Int32Array(rows).fill(xid));
      yield { length: rows, cells };
      await slice.yieldIfExpired();
    }
    left -= n;
    if (left <= 0) return;
  }
}

/** The batches of several points one after the other (long form: each point's rows in turn). */
export async function* concatenated(streams: readonly (() => AsyncGenerator<ColumnBatch>)[]): AsyncGenerator<ColumnBatch> {
  for (const stream of streams) yield* stream();
}

/**
 * Several points' rows merged by timestamp (ascending, or descending for latest values), at most
 * `limit` distinct timestamps: Mango's single array in long form. One batch of each point is held.
 */
export async function* mergedByTimestamp(
  schema: TableSchema,
  streams: readonly AsyncIterator<ColumnBatch>[],
  tsColumn: number,
  options: { descending: boolean; limit?: number; afterBatch: () => Promise<void> },
): AsyncGenerator<ColumnBatch> {
  const heads: (ColumnBatch | undefined)[] = [];
  const at: number[] = [];
  const advance = async (s: number) => {
    for (;;) {
      const next = await streams[s]!.next();
      if (next.done) return void (heads[s] = undefined);
      if (next.value.length > 0) {
        heads[s] = next.value;
        at[s] = 0;
        return;
      }
    }
  };
  for (let s = 0; s < streams.length; s++) await advance(s);
  const fresh = () => schema.columns.map((c) => emptyCells(c.kind, MERGED_ROWS));
  let out = fresh();
  let rows = 0;
  let distinct = 0;
  let lastTs = NaN;
  const limit = options.limit ?? Infinity;
  const cut = (): ColumnBatch => ({ length: rows, cells: out.map((c) => (Array.isArray(c) ? c.slice(0, rows) : c.subarray(0, rows))) });
  for (;;) {
    let pick = -1;
    let best = 0;
    for (let s = 0; s < heads.length; s++) {
      const head = heads[s];
      if (!head) continue;
      const ts = (head.cells[tsColumn] as Float64Array)[at[s]!]!;
      if (pick < 0 || (options.descending ? ts > best : ts < best)) {
        pick = s;
        best = ts;
      }
    }
    if (pick < 0) break;
    if (best !== lastTs) {
      if (++distinct > limit) break;
      lastTs = best;
    }
    const head = heads[pick]!;
    const row = at[pick]!;
    for (let c = 0; c < out.length; c++) (out[c] as (string | null | number)[])[rows] = (head.cells[c] as (string | null | number)[])[row]!;
    rows++;
    if (++at[pick]! >= head.length) await advance(pick);
    if (rows === MERGED_ROWS) {
      yield cut();
      out = fresh();
      rows = 0;
      await options.afterBatch();
    }
  }
  for (const stream of streams) await stream.return?.(undefined);
  if (rows > 0) yield cut();
}
