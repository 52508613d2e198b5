// One point's values in Mango 4/5's shapes (its StreamingPointValueTimeModel, written by the stream
// mappers of Mango's REST module), as JSON objects or CSV cells: the `fields` a query names, members
// whose value is null left out (Mango writes NON_NULL), timestamps as epoch ms or formatted text.
// A rollup's period carries the presenter's statistic; ALL is Mango's flat object of statistics,
// each with its own timestamp.
import { PLAIN_RENDERER, renderValue } from '../core/text-renderer.js';
import type { DataPointRecord } from '../store/metadata/data-points.js';
import type { StoredValue } from '../store/values/types.js';
import { apiValue } from '../values/ingest/types.js';
import type { RollupResult } from '../values/read/rollup-result.js';
import { ALL_FIELDS, StatisticsPresenter, type PresentedValue, type StatisticField, type StatisticRollup } from '../values/read/statistics.js';
import { csvCell } from './csv.js';
import { jsonValue, periodCells } from './point-value-reads.js';

/** Mango's PointValueField, in its declaration order (the order of CSV columns). */
export const MANGO_FIELDS = ['VALUE', 'TIMESTAMP', 'ANNOTATION', 'CACHED', 'BOOKEND', 'RENDERED', 'RAW', 'XID', 'NAME', 'DEVICE_NAME', 'DATA_SOURCE_NAME'] as const;
export type MangoField = (typeof MANGO_FIELDS)[number];
export const DEFAULT_FIELDS: ReadonlySet<MangoField> = new Set<MangoField>(['TIMESTAMP', 'VALUE']);

/** The member (and CSV column suffix) of each field. */
const MEMBER: Record<MangoField, string> = {
  VALUE: 'value',
  TIMESTAMP: 'timestamp',
  ANNOTATION: 'annotation',
  CACHED: 'cached',
  BOOKEND: 'bookend',
  RENDERED: 'rendered',
  RAW: 'raw',
  XID: 'xid',
  NAME: 'name',
  DEVICE_NAME: 'deviceName',
  DATA_SOURCE_NAME: 'dataSourceName',
};

/** The point's own members, as the point has them. */
const POINT_FIELDS: readonly MangoField[] = ['XID', 'NAME', 'DEVICE_NAME', 'DATA_SOURCE_NAME'];
const pointMember = (point: DataPointRecord, field: MangoField): string =>
  field === 'XID' ? point.xid : field === 'NAME' ? point.name : field === 'DEVICE_NAME' ? point.deviceName : point.dataSourceName;

/** Timestamps of a query: epoch ms, or the text of a dateTimeFormat pattern. */
export type FormatTime = ((ms: number) => string) | undefined;

/** A timestamp as JSON text or a CSV cell: the number, or its formatted text. */
export function timeText(format: FormatTime, csv: boolean, ms: number): string {
  const text = format?.(ms);
  if (text === undefined) return String(ms);
  return csv ? csvCell(text) : JSON.stringify(text);
}

export interface EncoderOptions {
  fields: ReadonlySet<MangoField>;
  format: FormatTime;
  csv: boolean;
  /**
   * Single-array rollups (Mango's STATISTIC timestamps): FIRST and LAST are stamped with the time of
   * their value (no timestamp when the period has none), the other statistics with the period start.
   */
  statisticTimes: boolean;
  /** CSV of several arrays: each row carries its own timestamp cell (single-array rows have one per row). */
  csvTimestampCell: boolean;
}

/** The CSV columns of a point's value for a field list (TIMESTAMP aside): VALUE, or ALL's statistics. */
function valueColumns(fields: ReadonlySet<MangoField>, all: boolean): string[] {
  const columns: string[] = [];
  for (const f of MANGO_FIELDS) {
    if (f === 'TIMESTAMP' || !fields.has(f)) continue;
    if (f === 'VALUE' && all) columns.push(...ALL_FIELDS);
    else columns.push(MEMBER[f]);
  }
  return columns;
}

/**
 * The header cells of one point's columns. Several arrays: `timestamp,value,...` for every point
 * alike; single array: `<xid>` for the value, `<xid>.<field>` for the rest (ALL: `<xid>.<statistic>`).
 */
export function csvHeader(point: DataPointRecord | undefined, fields: ReadonlySet<MangoField>, all: boolean): string[] {
  const columns = valueColumns(fields, all);
  if (!point) return columns.map((c) => csvCell(c));
  return columns.map((c) => csvCell(c === 'value' ? point.xid : `${point.xid}.${c}`));
}

export class MangoValueEncoder {
  /** The point's own members, written once: `,"xid":"..."` and so on (CSV: their cells). */
  private readonly pointJson: string;
  private readonly pointCsv: string;
  private readonly presenter: StatisticsPresenter | undefined;
  /** The statistic a single-statistic rollup answers. */
  private readonly field: StatisticField | undefined;
  readonly all: boolean;
  /** CSV: how many columns this point has, and the cells of a row where it has no value. */
  readonly csvColumns: number;
  readonly emptyCsv: string;

  constructor(
    private readonly point: DataPointRecord,
    private readonly o: EncoderOptions,
    rollup?: StatisticRollup,
  ) {
    this.presenter = rollup && new StatisticsPresenter(rollup, point.dataType);
    this.all = this.presenter?.all === true;
    this.field = this.presenter && !this.all ? this.presenter.columns[0] : undefined;
    this.pointJson = POINT_FIELDS.filter((f) => o.fields.has(f))
      .map((f) => `,"${MEMBER[f]}":${JSON.stringify(pointMember(point, f))}`)
      .join('');
    this.pointCsv = POINT_FIELDS.filter((f) => o.fields.has(f))
      .map((f) => `,${csvCell(pointMember(point, f))}`)
      .join('');
    this.csvColumns = valueColumns(o.fields, this.all).length;
    this.emptyCsv = ','.repeat(Math.max(0, this.csvColumns - 1));
  }

  private time(ms: number): string {
    return timeText(this.o.format, this.o.csv, ms);
  }

  /**
   * Through the point's text renderer (core/text-renderer.ts; "—" for no value, as Mango). A count
   * or an integral (`withUnit` false) is not a value of the point: PLAIN, without the unit.
   */
  private rendered(value: PresentedValue, withUnit: boolean): string {
    return withUnit ? renderValue(value, this.point.textRenderer, this.point.unit) : renderValue(value, PLAIN_RENDERER);
  }

  /** JSON members of one value (no braces, each with a leading comma): timestamp, value, raw, rendered. */
  private valueMembers(ts: number | null, value: PresentedValue, withUnit: boolean): string {
    const f = this.o.fields;
    let text = '';
    if (f.has('TIMESTAMP') && ts !== null) text += `,"timestamp":${this.time(ts)}`;
    if (value !== null) {
      if (f.has('VALUE')) text += `,"value":${jsonValue(value)}`;
      if (f.has('RAW')) text += `,"raw":${jsonValue(value)}`;
    }
    if (f.has('RENDERED')) text += `,"rendered":${JSON.stringify(this.rendered(value, withUnit))}`;
    return text;
  }

  /** CSV cells of the value columns (VALUE, ANNOTATION, CACHED, BOOKEND, RENDERED, RAW in Mango's order) and the point's. */
  private valueCells(ts: number, value: PresentedValue, annotation: string | null, bookend: boolean, withUnit: boolean): string {
    const f = this.o.fields;
    const cells: string[] = [];
    if (this.o.csvTimestampCell && f.has('TIMESTAMP')) cells.push(this.time(ts));
    if (f.has('VALUE')) cells.push(csvCell(value));
    if (f.has('ANNOTATION')) cells.push(csvCell(annotation));
    if (f.has('CACHED')) cells.push('false');
    if (f.has('BOOKEND')) cells.push(String(bookend));
    if (f.has('RENDERED')) cells.push(csvCell(this.rendered(value, withUnit)));
    if (f.has('RAW')) cells.push(csvCell(value));
    return cells.join(',') + this.pointCsv;
  }

  /**
   * A raw value at `ts`: `v` itself, or for a bookend the value in force there (`v` undefined: none).
   * Bookends are virtual: no annotation.
   */
  raw(ts: number, v: StoredValue | undefined, bookend: boolean): string {
    const value = v === undefined ? null : apiValue(this.point.dataType, v);
    const annotation = bookend || v === undefined ? null : v.annotation;
    if (this.o.csv) return this.valueCells(ts, value, annotation, bookend, true);
    const f = this.o.fields;
    let text = this.valueMembers(ts, value, true);
    if (f.has('ANNOTATION') && annotation !== null) text += `,"annotation":${JSON.stringify(annotation)}`;
    if (f.has('CACHED')) text += ',"cached":false';
    if (f.has('BOOKEND')) text += `,"bookend":${bookend}`;
    return `{${(text + this.pointJson).slice(1)}}`;
  }

  /** The timestamp of a statistic of period i: its value's time for FIRST and LAST where asked (null: none). */
  private statisticTime(result: RollupResult, i: number, field: StatisticField, statisticTimes: boolean): number | null {
    if (!statisticTimes || (field !== 'first' && field !== 'last')) return result.start(i);
    if ((result.count[i] as number) === 0) return null;
    return (field === 'first' ? result.firstTs[i] : result.lastTs[i]) as number;
  }

  /** Period i of a rollup: the statistic, or ALL's object (CSV: ALL's columns). */
  period(result: RollupResult, i: number): string {
    const presenter = this.presenter!;
    const f = this.o.fields;
    if (this.o.csv) {
      if (!this.all) return this.valueCells(result.start(i), presenter.value(result, i, this.field!), null, false, this.field !== 'count' && this.field !== 'integral');
      const cells: string[] = [];
      if (this.o.csvTimestampCell && f.has('TIMESTAMP')) cells.push(this.time(result.start(i)));
      // ALL's statistics stand for the value; its rendered and raw cells stay empty.
      for (const field of MANGO_FIELDS) {
        if (field === 'TIMESTAMP' || POINT_FIELDS.includes(field) || !f.has(field)) continue;
        if (field === 'VALUE') cells.push(periodCells(presenter, result, i));
        else cells.push(field === 'CACHED' || field === 'BOOKEND' ? 'false' : '');
      }
      return cells.join(',') + this.pointCsv;
    }
    let text: string;
    if (!this.all) {
      const field = this.field!;
      text = this.valueMembers(this.statisticTime(result, i, field, this.o.statisticTimes), presenter.value(result, i, field), field !== 'count' && field !== 'integral');
    } else {
      text = f.has('TIMESTAMP') ? `,"timestamp":${this.time(result.start(i))}` : '';
      for (const field of presenter.members) {
        const value = presenter.value(result, i, field);
        if (field === 'count') text += `,"count":${jsonValue(value)}`;
        else text += `,"${field}":{${this.valueMembers(this.statisticTime(result, i, field, true), value, field !== 'integral').slice(1)}}`;
      }
    }
    if (f.has('CACHED')) text += ',"cached":false';
    if (f.has('BOOKEND')) text += ',"bookend":false';
    return `{${(text + this.pointJson).slice(1)}}`;
  }
}
