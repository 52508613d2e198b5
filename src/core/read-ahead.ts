// Asks a source for its next item while the caller works on the current one: a store read (done on
// the database's own threads) then overlaps the encoding of the batch before it. At most one item is
// held ahead.

export async function* readAhead<T>(source: AsyncIterable<T>): AsyncGenerator<T> {
  const it = source[Symbol.asyncIterator]();
  let next = it.next();
  try {
    for (;;) {
      const r = await next;
      if (r.done) return;
      next = it.next();
      yield r.value;
    }
  } finally {
    // The caller stopped early: the read ahead is not wanted (its failure neither), the source ends.
    next.catch(() => undefined);
    await it.return?.(undefined);
  }
}
