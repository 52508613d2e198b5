// Several points' sorted streams merged by timestamp, without loading them: each point's rows arrive
// as chunks (timestamps and the text of each row), and the merge holds one chunk per point. One output
// row per distinct timestamp, with each point's text at it (or none). Used by the several-points CSV
// table and by Mango's single-array answers.

/** One point's rows in the stream's order: timestamps and the text of each row. */
export interface TimedCells {
  ts: number[];
  cells: string[];
}

interface Head {
  rows: AsyncIterator<TimedCells>;
  chunk: TimedCells | undefined;
  at: number;
}

/** Rows written between yields: big enough to stream efficiently, small enough to share the loop. */
const ROWS_PER_CHUNK = 2_000;

async function advance(h: Head): Promise<void> {
  while (h.chunk === undefined || h.at >= h.chunk.ts.length) {
    const next = await h.rows.next();
    if (next.done) {
      h.chunk = undefined;
      return;
    }
    h.chunk = next.value;
    h.at = 0;
  }
}

export interface MergeOptions {
  /** The streams run newest first (default oldest first). */
  descending?: boolean;
  /** At most this many rows. */
  limit?: number;
  /** Text before the first row, sent with it (so the first rows are read before the answer starts). */
  head?: string;
  /** Called after each chunk of rows was handed on (share the event loop). */
  afterChunk: () => Promise<void>;
}

/**
 * The text of the merged rows, `row` writing each from its timestamp and each stream's text at it
 * (undefined where a stream has none; the array is reused, copy what you keep). A stream with two
 * rows at one timestamp gives two rows (each row takes at most one row of each stream).
 */
export async function* mergeByTimestamp(
  streams: readonly AsyncIterator<TimedCells>[],
  row: (ts: number, cells: readonly (string | undefined)[]) => string,
  options: MergeOptions,
): AsyncGenerator<string> {
  const heads: Head[] = streams.map((rows) => ({ rows, chunk: undefined, at: 0 }));
  const cells = new Array<string | undefined>(heads.length);
  const sign = options.descending ? -1 : 1;
  const limit = options.limit ?? Infinity;
  let text = options.head ?? '';
  let rows = 0;
  try {
    for (const h of heads) await advance(h);
    while (rows < limit) {
      // The next timestamp in stream order (sign turns "newest first" into "smallest first").
      let key = Infinity;
      for (const h of heads) if (h.chunk && sign * h.chunk.ts[h.at]! < key) key = sign * h.chunk.ts[h.at]!;
      if (key === Infinity) break;
      const ts = sign * key;
      for (let i = 0; i < heads.length; i++) {
        const h = heads[i]!;
        if (h.chunk && h.chunk.ts[h.at] === ts) {
          cells[i] = h.chunk.cells[h.at];
          h.at++;
          if (h.at >= h.chunk.ts.length) await advance(h);
        } else {
          cells[i] = undefined;
        }
      }
      text += row(ts, cells);
      if (++rows % ROWS_PER_CHUNK === 0) {
        yield text;
        text = '';
        await options.afterChunk();
      }
    }
    if (text !== '') yield text;
  } finally {
    // The client went away, a read failed or the limit was reached: let every stream end.
    await Promise.all(streams.map((s) => s.return?.(undefined)));
  }
}
