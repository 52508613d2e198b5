// The many items of a configuration import (points, detectors) written a chunk at a time, so that
// an import of thousands costs a few statements per chunk rather than several per item: the stored
// records of a chunk's keys are fetched in one query, each item is checked and turned into the record
// it would store without SQL (its lookups answered from what the chunk fetched), the new ones are
// inserted by one multi-row statement and the changed ones updated, each chunk's writes under one
// savepoint. Should a chunk's writes fail, they are rolled back and done one by one, each under a
// savepoint of its own, so that the failure is placed on its item.
import { TimeSlice } from '../core/time-slice.js';
import type { CrudRepository } from '../store/metadata/crud.js';
import type { Queryable, Row } from '../store/metadata/db.js';
import { translateDuplicateXid } from './resources.js';

/**
 * Items per chunk: each chunk's statements (its lookup, its multi-row insert, the inserted rows read
 * back) each hold the event loop for some 10 ms on PGlite, which runs them on this thread.
 */
export const IMPORT_CHUNK = 50;

type Keyed = Row & { id: number; xid: string };

/** How one kind of item is checked and written. */
export interface ChunkedKind<T extends Keyed> {
  repo: Pick<CrudRepository<T>, 'findMany' | 'insertMany' | 'insert' | 'update'>;
  /** Fetches, in a few queries, what the items of a chunk look up (their sources, their points). */
  prefetch(items: readonly Record<string, unknown>[], existing: readonly T[]): Promise<void>;
  /** The record a new item stores (throws its problems). */
  newRecord(item: Record<string, unknown>): Promise<Partial<T>>;
  /** The fields an item changes on its stored record (throws its problems). */
  changesTo(existing: T, item: Record<string, unknown>): Promise<Partial<T>>;
  /** Whether the record is as the document has it already (then it is left alone). */
  same(before: T, after: T): boolean;
}

export interface ChunkListener<T> {
  /** The item at `index` has problems (a thrown error, placed by the caller). */
  problem(index: number, err: unknown): void;
  /** Written: the record as saved (a changed one: as it now is) and as it was before. */
  saved(record: T, before: T | undefined): void;
}

interface Write<T> {
  index: number;
  before: T | undefined;
  /** The new record, or the changes to `before`. */
  values: Partial<T>;
}

export async function importInChunks<T extends Keyed>(
  tx: Queryable,
  kind: ChunkedKind<T>,
  items: readonly Record<string, unknown>[],
  listener: ChunkListener<T>,
): Promise<void> {
  const slice = new TimeSlice();
  for (let from = 0; from < items.length; from += IMPORT_CHUNK) {
    const chunk = items.slice(from, from + IMPORT_CHUNK);
    const stored = await kind.repo.findMany('xid', chunk.map((item) => item.xid));
    const byXid = new Map(stored.map((r) => [r.xid, r]));
    await kind.prefetch(chunk, stored);
    const creates: Write<T>[] = [];
    const updates: Write<T>[] = [];
    for (const [k, item] of chunk.entries()) {
      const index = from + k;
      const before = byXid.get(item.xid as string);
      try {
        if (!before) creates.push({ index, before, values: await kind.newRecord(item) });
        else {
          const values = await kind.changesTo(before, item);
          if (!kind.same(before, { ...before, ...values })) updates.push({ index, before, values });
        }
      } catch (err) {
        listener.problem(index, err);
      }
      await slice.yieldIfExpired();
    }
    // Written even after problems: later items (a detector on one of these points) are checked against them.
    await inOneSavepoint(tx, creates, listener, async () => {
      const saved = await kind.repo.insertMany(creates.map((w) => w.values));
      for (const record of saved) listener.saved(record, undefined);
    }, async (w) => {
      listener.saved(await kind.repo.insert(w.values), undefined);
    });
    await inOneSavepoint(tx, updates, listener, async () => {
      for (const w of updates) await kind.repo.update(w.before!.id, w.values);
      for (const w of updates) listener.saved({ ...w.before!, ...w.values }, w.before);
    }, async (w) => {
      await kind.repo.update(w.before!.id, w.values);
      listener.saved({ ...w.before!, ...w.values }, w.before);
    });
  }
}

/** Runs `all` under one savepoint; should it fail, rolls it back and runs `one` per write, each under its own. */
async function inOneSavepoint<T>(
  tx: Queryable,
  writes: readonly Write<T>[],
  listener: ChunkListener<T>,
  all: () => Promise<void>,
  one: (w: Write<T>) => Promise<void>,
): Promise<void> {
  if (writes.length === 0) return;
  await tx.query('savepoint config_chunk');
  try {
    await all();
    await tx.query('release savepoint config_chunk');
    return;
  } catch {
    await tx.query('rollback to savepoint config_chunk');
  }
  for (const w of writes) {
    await tx.query('savepoint config_item');
    try {
      await one(w);
      await tx.query('release savepoint config_item');
    } catch (err) {
      await tx.query('rollback to savepoint config_item');
      listener.problem(w.index, translateDuplicateXid(err));
    }
  }
}
