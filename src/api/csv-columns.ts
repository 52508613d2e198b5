// Several points as one CSV table: a `timestamp` column, then each point's column(s), one row per
// distinct timestamp (per period for a rollup), empty cells where a point has no value then. Each
// point's rows arrive as a sorted stream; the table is their merge by timestamp (timestamp-merge.ts),
// so only one chunk of rows per point is held at a time, whatever the range.
import { mergeByTimestamp, type TimedCells } from './timestamp-merge.js';

/** One point's rows, oldest first: timestamps and the CSV text of its cells at each (no line end). */
export type ColumnRows = TimedCells;

export interface CsvColumn {
  /** Header cells (already CSV-escaped) of this point's column(s). */
  header: string;
  /** The cells of a row where this point has no value: "" for one column, "," × (n − 1) for n. */
  empty: string;
  rows: AsyncIterator<ColumnRows>;
}

/**
 * The merged table as text chunks; `timeCell` writes a row's timestamp cell (epoch ms by default). A point with two rows at one timestamp gives two table rows
 * (each row takes at most one value of each point).
 */
export async function* mergedCsv(
  columns: readonly CsvColumn[],
  afterChunk: () => Promise<void>,
  timeCell: (ts: number) => string = String,
): AsyncGenerator<string> {
  const row = (ts: number, cells: readonly (string | undefined)[]) => {
    let line = timeCell(ts);
    for (let i = 0; i < cells.length; i++) line += `,${cells[i] ?? columns[i]!.empty}`;
    return `${line}\r\n`;
  };
  yield* mergeByTimestamp(
    columns.map((c) => c.rows),
    row,
    { afterChunk, head: `timestamp${columns.map((c) => `,${c.header}`).join('')}\r\n` },
  );
}
