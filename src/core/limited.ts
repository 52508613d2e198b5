// Work over a list that can grow with the data (points, sources, warnings), a few items at a time:
// `Promise.all(list.map(query))` starts every query at once, however long the list.

/** Runs `fn` over `items`, at most `limit` at a time; rejects with the first failure once all started ones settled. */
export async function forEachLimited<T>(items: Iterable<T>, limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  const iterator = items[Symbol.iterator]();
  let failure: { err: unknown } | undefined;
  const worker = async () => {
    for (let next = iterator.next(); !next.done && !failure; next = iterator.next()) {
      try {
        await fn(next.value);
      } catch (err) {
        failure ??= { err };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, limit) }, worker));
  if (failure) throw failure.err;
}
