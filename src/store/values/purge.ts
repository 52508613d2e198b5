// Deleting old values of many series without holding writers up: each series is deleted from its
// oldest value on, a slice of time at a time, each slice one `delete` of the engine (so appends queued
// meanwhile go between slices). The slice adapts to the density of the series: a slice that deleted
// many values is followed by a shorter one, one that deleted few by a longer one.
import { maxOf } from '../../core/extremes.js';
import { TimeSlice } from '../../core/time-slice.js';
import { INSTANT_RANGE, type PointValueStore } from './types.js';

const DAY_MS = 86_400_000;
/** Values one delete should take at most, and below which the next slice doubles. */
const MAX_PER_SLICE = 50_000;
const MIN_PER_SLICE = 10_000;

/** Deletes, per series, the values with ts < its cutoff; returns how many (onSeries hears each series' count). */
export async function purgeSeries(
  store: PointValueStore,
  cutoffs: ReadonlyMap<number, number>,
  onSeries: (series: number, deleted: number) => void = () => {},
): Promise<number> {
  let total = 0;
  // Most points may have nothing to purge: where the engine can tell which series may, only those
  // are visited (one query rather than one per point). The loop still yields, however many remain.
  const candidates = store.seriesBefore ? await store.seriesBefore(maxOf(cutoffs.values())) : cutoffs.keys();
  const slice = new TimeSlice();
  for (const series of candidates) {
    const cutoff = cutoffs.get(series);
    if (cutoff === undefined) continue;
    const n = await purgeOne(store, series, cutoff);
    if (n > 0) onSeries(series, n);
    total += n;
    await slice.yieldIfExpired();
  }
  return total;
}

async function purgeOne(store: PointValueStore, series: number, cutoff: number): Promise<number> {
  let deleted = 0;
  let slice = DAY_MS;
  for (;;) {
    const oldest = await oldestBefore(store, series, cutoff);
    if (oldest === undefined) return deleted;
    const n = await store.delete(series, oldest, Math.min(cutoff, oldest + slice));
    deleted += n;
    if (n === 0) return deleted; // deleted meanwhile by someone else: nothing of ours to go on with
    if (n > MAX_PER_SLICE && slice > 1_000) slice = Math.floor(slice / 2);
    else if (n < MIN_PER_SLICE) slice *= 2;
  }
}

/** The timestamp of the series' oldest value before `before`, if any. */
async function oldestBefore(store: PointValueStore, series: number, before: number): Promise<number | undefined> {
  for await (const batch of store.range(series, store.timeRange?.min ?? INSTANT_RANGE.min, before, 1)) {
    if (batch.length > 0) return batch[0]!.ts;
  }
  return undefined;
}
