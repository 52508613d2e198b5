// Data point tags as Mango's /data-point-tags serves them: the keys and values over the points the
// caller may read, and one point's tags read, replaced or merged.
//
// Decisions where Mango and the contract leave room:
// - `name` and `device` are Mango's implicit tags (the point's name and device name): listed by
//   keys and values, never in a point's tags here, ignored in a write's body. A stored tag of either
//   name (possible through /data-points) is left as it is by these writes.
// - A write needs what a point save needs (checkEdit: read, and edit on the point or its source),
//   goes through DataPointService.saveTags (so the caches, the runtime and the other instances hear
//   it as any save), and holds the result to the data point schema's tag limits (data-point-tags).
// - A merge applies to the tags as stored when it writes: a write that changed them meanwhile
//   makes it read them again (compare and set), so two merges never lose one another's keys.
import { DomainError } from '../core/errors.js';
import { MAX_LIMIT } from '../core/rql/check.js';
import type { Validator } from '../core/validation.js';
import { dataPointTagResource, IMPLICIT_TAGS, type DataPointTagsRepository } from '../store/metadata/data-point-tags.js';
import type { DataPointRecord } from '../store/metadata/data-points.js';
import type { DataPointService } from './data-points.js';
import type { Principal } from './permissions.js';
import { listQuery } from './resources.js';

export type Tags = Record<string, string>;

/** Rounds of read, merge and compare-and-set before a merge that keeps meeting other writes gives up. */
const MAX_ATTEMPTS = 10;

const isImplicit = (key: string): boolean => (IMPLICIT_TAGS as readonly string[]).includes(key);

/** The tags as Mango shows them: without the implicit keys. */
export function visibleTags(tags: Tags): Tags {
  return Object.fromEntries(Object.entries(tags).filter(([k]) => !isImplicit(k)));
}

/** A body's entries without the implicit keys; anything but an object is left for the schema to refuse. */
function withoutImplicit(body: unknown): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  return Object.fromEntries(Object.entries(body).filter(([k]) => !isImplicit(k)));
}

export class DataPointTagsService {
  constructor(
    private readonly repo: DataPointTagsRepository,
    private readonly points: DataPointService,
    private readonly validator: Validator,
  ) {}

  /** The tag keys on the points the user may read, as a JSON array (code-point order, at most MAX_LIMIT). */
  keys(user: Principal): Promise<string> {
    return this.repo.keys(listQuery(user, dataPointTagResource, '', 't.read_permission'), MAX_LIMIT);
  }

  /** The distinct values of `key` over the readable points that `rawQuery` (RQL over tag keys) selects, as a JSON array. */
  values(user: Principal, key: string, rawQuery: string): Promise<string> {
    return this.repo.values(key, listQuery(user, dataPointTagResource, rawQuery, 't.read_permission'));
  }

  async get(user: Principal, xid: string): Promise<Tags> {
    return visibleTags((await this.points.get(user, xid)).tags);
  }

  /** POST: the body becomes the point's tags. */
  replace(user: Principal, xid: string, body: unknown): Promise<Tags> {
    const tags = this.validator.validate<Tags>('data-point-tags', withoutImplicit(body));
    return this.write(user, xid, () => tags);
  }

  /** PUT: each key of the body set to its value, or removed when it is null; the other tags kept. */
  merge(user: Principal, xid: string, body: unknown): Promise<Tags> {
    const changes = this.validator.validate<Record<string, string | null>>('data-point-tags-merge', withoutImplicit(body));
    const sets = Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== null));
    this.validator.validate('data-point-tags', sets);
    return this.write(user, xid, (current) => {
      // A Map, not assignments: a key such as __proto__ is a tag like any other.
      const next = new Map(Object.entries(current));
      for (const [k, v] of Object.entries(changes)) {
        if (v === null) next.delete(k);
        else next.set(k, v);
      }
      return Object.fromEntries(next);
    });
  }

  /** Reads the point, computes its visible tags from the current ones, and stores them unless another write came first. */
  private async write(user: Principal, xid: string, next: (current: Tags) => Tags): Promise<Tags> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const existing: DataPointRecord = await this.points.getForEdit(user, xid);
      const visible = this.validator.validate<Tags>('data-point-tags', next(visibleTags(existing.tags)));
      const kept = Object.fromEntries(Object.entries(existing.tags).filter(([k]) => isImplicit(k)));
      const saved = await this.points.saveTags(existing, { ...visible, ...kept });
      if (saved) return visibleTags(saved.tags);
    }
    throw DomainError.conflict("The point's tags kept changing during the update: try again");
  }
}
