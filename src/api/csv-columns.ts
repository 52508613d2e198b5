// Several points as one CSV table: a `timestamp` column, then each point's column(s), one row per
// distinct timestamp (per period for a rollup), empty cells where a point has no value then. Each
// point's rows arrive as a sorted stream; the table is their k-way merge, so only one chunk of rows
// per point is held at a time, whatever the range.

/** One point's rows, oldest first: timestamps and the CSV text of its cells at each (no line end). */
export interface ColumnRows {
  ts: number[];
  cells: string[];
}

export interface CsvColumn {
  /** Header cells (already CSV-escaped) of this point's column(s). */
  header: string;
  /** The cells of a row where this point has no value: "" for one column, "," × (n − 1) for n. */
  empty: string;
  rows: AsyncIterator<ColumnRows>;
}

interface Head {
  column: CsvColumn;
  chunk: ColumnRows | undefined;
  at: number;
}

/** Rows written between yields: big enough to stream efficiently, small enough to share the loop. */
const ROWS_PER_CHUNK = 2_000;

async function advance(h: Head): Promise<void> {
  while (h.chunk === undefined || h.at >= h.chunk.ts.length) {
    const next = await h.column.rows.next();
    if (next.done) {
      h.chunk = undefined;
      return;
    }
    h.chunk = next.value;
    h.at = 0;
  }
}

/**
 * The merged table as text chunks. A point with two rows at one timestamp gives two table rows
 * (each row takes at most one value of each point).
 */
export async function* mergedCsv(columns: readonly CsvColumn[], afterChunk: () => Promise<void>): AsyncGenerator<string> {
  let text = `timestamp${columns.map((c) => `,${c.header}`).join('')}\r\n`;
  const heads: Head[] = columns.map((column) => ({ column, chunk: undefined, at: 0 }));
  for (const h of heads) await advance(h);
  let rows = 0;
  try {
    for (;;) {
      let ts = Infinity;
      for (const h of heads) if (h.chunk && h.chunk.ts[h.at]! < ts) ts = h.chunk.ts[h.at]!;
      if (ts === Infinity) break;
      text += ts;
      for (const h of heads) {
        if (h.chunk && h.chunk.ts[h.at] === ts) {
          text += `,${h.chunk.cells[h.at]}`;
          h.at++;
          if (h.at >= h.chunk.ts.length) await advance(h);
        } else {
          text += `,${h.column.empty}`;
        }
      }
      text += '\r\n';
      if (++rows % ROWS_PER_CHUNK === 0) {
        yield text;
        text = '';
        await afterChunk();
      }
    }
    if (text !== '') yield text;
  } finally {
    // The client went away (or a read failed): let every point's reader end.
    await Promise.all(columns.map((c) => c.rows.return?.(undefined)));
  }
}
