// Configuration export and import (API-DECISIONS "Logging, retention, configuration"). Export: every
// source, point, detector, event handler, user and JSON store item in the shapes the resources answer, without ids,
// runtime state or secrets, in a fixed order (by XID, users by username), so that export → import →
// export gives the same document. Import: the same document (any subset of the keys) applied in ONE
// metadata transaction by services bound to it, item by item under a savepoint, so that every item's
// problems are collected with their place in the document (`dataPoints[3].pointLocator.offset`); with
// any problem the transaction rolls back and nothing is written. Only after the commit hear the
// runtime, the caches and the other instances of what changed. An item equal to what is stored is
// left alone (neither created nor updated), so importing a document twice changes nothing the second time.
import { isDeepStrictEqual } from 'node:util';
import { DomainError, validationMessage, type ValidationMessage } from '../core/errors.js';
import { usernameKey } from '../core/username-key.js';
import { itemDepthProblem } from '../core/json.js';
import type { Validator } from '../core/validation.js';
import { TimeSlice } from '../core/time-slice.js';
import type { CrudRepository } from '../store/metadata/crud.js';
import type { MetadataDb, Queryable } from '../store/metadata/db.js';
import { DataPointsRepository, type DataPointRecord } from '../store/metadata/data-points.js';
import { DataSourcesRepository, type DataSourceRecord } from '../store/metadata/data-sources.js';
import { EventDetectorsRepository, type EventDetectorRecord } from '../store/metadata/event-detectors.js';
import { DeliveriesRepository, EventHandlersRepository } from '../store/metadata/event-handlers.js';
import { JsonStoreRepository } from '../store/metadata/json-store.js';
import { UsersRepository, type UserRecord } from '../store/metadata/users.js';
import { dataPointView, DataPointService } from './data-points.js';
import { dataSourceView, DataSourceService } from './data-sources.js';
import { eventDetectorView, EventDetectorService, type SavedDetector } from './event-detectors.js';
import type { EventHandlerService } from './event-handlers.js';
import { importInChunks } from './import-chunks.js';
import { JsonStoreService, jsonStoreItemJson } from './json-store.js';
import { generateXid, type ListResult } from './resources.js';
import { verifyPassword } from './passwords.js';
import { assertSuperadmin } from './permissions.js';
import { userView, UserService, type Actor } from './users.js';

/**
 * Also the order of an import: a kind after those it refers to (points name sources, detectors
 * points, handlers' matchers detectors and sources, SET_POINT handlers points).
 */
export const CONFIGURATION_KINDS = ['dataSources', 'dataPoints', 'eventDetectors', 'eventHandlers', 'users', 'jsonStore'] as const;
export type ConfigurationKind = (typeof CONFIGURATION_KINDS)[number];
type Item = Record<string, unknown>;
export type ConfigurationDocument = Partial<Record<ConfigurationKind, Item[]>>;

/** Bytes of JSON text per chunk of a streamed export. */
const EXPORT_CHUNK = 64 * 1024;

/** Rows per list window of the export: the largest limit() RQL allows. */
const WINDOW = 100_000;

/**
 * Every item of a kind in order of its unique key, in windows of the largest list the RQL allows
 * (one window would cut a configuration of 200,000 points in half), each window after the last key
 * of the one before (no OFFSET to skip through).
 */
function everything<T>(list: (rql: string) => Promise<ListResult<T>>, key: 'xid' | 'username' = 'xid'): { batches: AsyncIterable<T[]> } {
  async function* batches(): AsyncGenerator<T[]> {
    for (let after: string | undefined; ; ) {
      let n = 0;
      const from = after === undefined ? '' : `gt(${key},string:${rqlValue(after)})&`;
      for await (const batch of (await list(`${from}sort(${key})&limit(${WINDOW})`)).batches) {
        n += batch.length;
        after = (batch[batch.length - 1] as Record<typeof key, string>)[key];
        yield batch;
      }
      if (n < WINDOW) return;
    }
  }
  return { batches: batches() };
}

/** A string as an RQL value: percent-encoded, the characters RQL gives meaning to included. */
const rqlValue = (text: string) => encodeURIComponent(text).replace(/[!'()*~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** What each kind's export leaves out of the resource's answer: ids, runtime state, derived names. */
const OMIT: Record<ConfigurationKind, readonly string[]> = {
  dataSources: ['id', 'state', 'lastError', 'lastErrorTimestamp', 'lastErrorCleared', 'runningOn'],
  dataPoints: ['id', 'dataSourceName', 'dataSourceType', 'lastWarning', 'lastWarningTimestamp', 'lastWarningCleared', 'unreliable', 'unreliableSince', 'unreliableReason'],
  eventDetectors: ['id'],
  eventHandlers: ['id'],
  users: ['id', 'created', 'lastLogin', 'lastPasswordChange'],
  jsonStore: ['id'],
};

const omit = (kind: ConfigurationKind, view: Item): Item => Object.fromEntries(Object.entries(view).filter(([k]) => !OMIT[kind].includes(k)));

export interface ConfigurationServices {
  db: MetadataDb;
  validator: Validator;
  /** JSON_MAX_DEPTH: each imported item nests at most this deep (a JSON store item's jsonData on its own). */
  jsonMaxDepth: number;
  sources: DataSourceService;
  points: DataPointService;
  detectors: EventDetectorService;
  /** Event handlers; an import binds its kinds and checks to the import's transaction. */
  eventHandlers: EventHandlerService;
  users: UserService;
  jsonStore: JsonStoreService;
}

/** What a data source copy takes (Mango's copyXid, copyName, copyDeviceName, enabled, copyPoints). */
export interface SourceCopyOptions {
  xid?: string;
  name?: string;
  deviceName?: string;
  enabled: boolean;
  points: boolean;
}

/** The services of one import, writing through its transaction. */
interface Bound {
  sources: DataSourceService;
  sourceRepo: DataSourcesRepository;
  points: DataPointService;
  pointRepo: DataPointsRepository;
  detectors: EventDetectorService;
  detectorRepo: EventDetectorsRepository;
  eventHandlers: EventHandlerService;
  users: UserService;
  jsonStore: JsonStoreService;
}

/** What the live services must hear once the import committed. */
type Change =
  | { kind: 'dataSources'; record: DataSourceRecord }
  | { kind: 'dataPoints'; record: DataPointRecord }
  | { kind: 'eventDetectors'; record: EventDetectorRecord; before: EventDetectorRecord | undefined }
  | { kind: 'users'; record: UserRecord; before: UserRecord | undefined }
  | { kind: 'eventHandlers' }
  | { kind: 'jsonStore' };

type Outcome = 'created' | 'updated' | 'unchanged';

/** Thrown inside the transaction to roll it back when items had problems. */
class ItemsRefused extends Error {}

export class ConfigurationService {
  constructor(private readonly s: ConfigurationServices) {}

  /** The document as JSON text in chunks, read as they are taken (a streamed answer). */
  export(user: Actor, include: readonly ConfigurationKind[] = CONFIGURATION_KINDS): AsyncGenerator<string> {
    assertSuperadmin(user);
    return this.exportWith(this.bind(this.s.db), user, include);
  }

  async import(user: Actor, body: unknown): Promise<{ created: number; updated: number }> {
    assertSuperadmin(user);
    const doc = checkDocument(body, this.s.jsonMaxDepth);
    const problems: ValidationMessage[] = [];
    const changes: Change[] = [];
    let counts: { created: number; updated: number };
    try {
      counts = await this.s.db.transaction(async (tx) => {
        const bound = this.bind(tx);
        const c = { created: 0, updated: 0 };
        const slice = new TimeSlice();
        for (const kind of CONFIGURATION_KINDS) {
          const items = doc[kind] ?? [];
          if (kind === 'dataPoints' || kind === 'eventDetectors') {
            await this.importInChunks(tx, bound, user, kind, items, changes, problems, c);
            if (kind === 'dataPoints') await checkComputedPoints(bound.points, user, items, problems);
            continue;
          }
          for (const [i, item] of items.entries()) {
            await tx.query('savepoint config_item');
            try {
              const outcome = await this.applyItem(bound, user, kind, item, changes);
              await tx.query('release savepoint config_item');
              if (outcome !== 'unchanged') c[outcome]++;
            } catch (err) {
              await tx.query('rollback to savepoint config_item');
              for (const p of itemProblems(err, `${kind}[${i}]`)) problems.push(p);
            }
            await slice.yieldIfExpired();
          }
        }
        if (problems.length > 0) throw new ItemsRefused();
        return c;
      });
    } catch (err) {
      if (err instanceof ItemsRefused) throw DomainError.validation(problems.slice(0, 1000));
      throw err;
    }
    await this.announce(changes);
    return counts;
  }

  /**
   * Mango's data source copy: the source (its settings and secrets too) under a new XID and name, with
   * its points when asked (new XIDs, the same settings, a new device name when given). Written as an
   * import of those items: one transaction, and the copy starts once after the commit.
   */
  async copySource(user: Actor, xid: string, options: SourceCopyOptions): Promise<DataSourceRecord> {
    assertSuperadmin(user);
    const source = await this.s.sources.findByXid(xid);
    if (!source) throw DomainError.notFound();
    const copyXid = options.xid ?? generateXid('DS');
    if (await this.s.sources.findByXid(copyXid)) throw DomainError.conflict();
    const item = { ...omit('dataSources', dataSourceView(source)), ...source.settings, xid: copyXid, name: options.name ?? `${source.name} Copy`, enabled: options.enabled };
    const points = options.points ? await this.s.points.forSource(source.id) : [];
    const pointItems = points.map((p) => ({
      ...omit('dataPoints', dataPointView(p)),
      xid: generateXid('DP'),
      dataSourceXid: copyXid,
      ...(options.deviceName === undefined ? {} : { deviceName: options.deviceName }),
    }));
    await this.import(user, { dataSources: [item], dataPoints: pointItems });
    const copy = await this.s.sources.findByXid(copyXid);
    if (!copy) throw DomainError.notFound();
    return copy;
  }

  private bind(db: Queryable): Bound {
    const { validator } = this.s;
    const sourceRepo = new DataSourcesRepository(db);
    const sources = new DataSourceService(sourceRepo, validator);
    const pointRepo = new DataPointsRepository(db);
    const points = new DataPointService(pointRepo, sources, validator);
    const detectorRepo = new EventDetectorsRepository(db);
    const usersRepo = new UsersRepository(db);
    return {
      sources,
      sourceRepo,
      points,
      pointRepo,
      detectors: new EventDetectorService(detectorRepo, points, validator),
      detectorRepo,
      // A handler's matchers name detectors and sources: looked up in this transaction, so that
      // those imported earlier in the same document are found.
      // The kinds' checks (a SET_POINT's points, an EMAIL's users) read the transaction too.
      eventHandlers: this.s.eventHandlers.boundTo(
        new EventHandlersRepository(db),
        new DeliveriesRepository(db),
        {
          detectorExists: async (xid) => (await detectorRepo.findOne('xid', xid)) !== undefined,
          sourceExists: async (xid) => (await sourceRepo.findOne('xid', xid)) !== undefined,
        },
        { point: (xid) => pointRepo.findOne('xid', xid), user: (username) => usersRepo.findByUsername(username) },
      ),
      users: new UserService(usersRepo, validator),
      jsonStore: new JsonStoreService(new JsonStoreRepository(db), validator, this.s.jsonMaxDepth),
    };
  }

  /**
   * The document as JSON text, in chunks of some EXPORT_CHUNK bytes as the lists are read: a
   * configuration of 200,000 points is 120 MB of JSON, never one string nor one JSON.stringify.
   */
  private async *exportWith(b: Bound, user: Actor, include: readonly ConfigurationKind[]): AsyncGenerator<string> {
    let chunk = '{';
    let kinds = 0;
    for (const kind of CONFIGURATION_KINDS) {
      if (!include.includes(kind)) continue;
      chunk += `${kinds++ > 0 ? ',' : ''}${JSON.stringify(kind)}:[`;
      let items = 0;
      for await (const texts of this.exportKind(b, user, kind)) {
        for (const text of texts) chunk += (items++ > 0 ? ',' : '') + text;
        if (chunk.length >= EXPORT_CHUNK) {
          yield chunk;
          chunk = '';
        }
      }
      chunk += ']';
    }
    yield `${chunk}}`;
  }

  /**
   * The kind's items as JSON texts, a list batch at a time. A JSON store document is spliced in as
   * stored, never parsed and written again: an item stored deeper than JSON_MAX_DEPTH before the limit
   * existed is exported as it is (the export is the backup; its import then names the item), and no
   * depth overflows the stack.
   */
  private async *exportKind(b: Bound, user: Actor, kind: ConfigurationKind): AsyncGenerator<string[]> {
    async function* collect<T>(list: { batches: AsyncIterable<T[]> }, view: (r: T) => Item | string | Promise<Item | string>): AsyncGenerator<string[]> {
      for await (const batch of list.batches) {
        const texts: string[] = [];
        for (const r of batch) {
          const v = await view(r);
          texts.push(typeof v === 'string' ? v : JSON.stringify(omit(kind, v)));
        }
        yield texts;
      }
    }
    switch (kind) {
      case 'dataSources':
        yield* collect(everything((q) => b.sources.list(user, q)), dataSourceView);
        break;
      case 'dataPoints':
        yield* collect(everything((q) => b.points.list(user, q)), dataPointView);
        break;
      case 'eventDetectors':
        yield* collect(everything((q) => b.detectors.list(user, q)), eventDetectorView);
        break;
      case 'eventHandlers':
        // Each type's view: write-only fields (a WEBHOOK's secret) are left out, as a source's password is.
        yield* collect(everything((q) => b.eventHandlers.list(user, q)), (h) => b.eventHandlers.view(h));
        break;
      case 'users':
        yield* collect(everything((q) => b.users.list(user, q), 'username'), (u) => ({ ...userView(u) }));
        break;
      case 'jsonStore':
        yield* collect(everything((q) => b.jsonStore.list(user, q)), async (r) => jsonStoreItemJson(await b.jsonStore.get(user, r.xid), OMIT.jsonStore));
        break;
    }
  }

  /**
   * Points and detectors, of which there may be thousands, a chunk at a time (import-chunks.ts):
   * checked as the services check them, their sources and points looked up a chunk at a time.
   */
  private async importInChunks(
    tx: Queryable,
    b: Bound,
    user: Actor,
    kind: 'dataPoints' | 'eventDetectors',
    items: readonly Item[],
    changes: Change[],
    problems: ValidationMessage[],
    counts: { created: number; updated: number },
  ): Promise<void> {
    const problem = (index: number, err: unknown) => {
      for (const p of itemProblems(err, `${kind}[${index}]`)) problems.push(p);
    };
    if (kind === 'dataPoints') {
      const sources = new Lookup(b.sourceRepo);
      await importInChunks(tx, {
        repo: b.pointRepo,
        prefetch: (chunk, stored) => sources.fetch(chunk.map((i) => i.dataSourceXid), stored.map((p) => p.dataSourceId)),
        newRecord: (item) => b.points.newRecord(user, item, sources),
        async changesTo(existing, item) {
          await b.points.checkEdit(user, existing);
          return b.points.changesTo(existing, item, sources);
        },
        same: (before, after) => isDeepStrictEqual(omit(kind, dataPointView(before)), omit(kind, dataPointView(after))),
      }, items, {
        problem,
        saved(record, before) {
          counts[before ? 'updated' : 'created']++;
          changes.push({ kind, record: before ?? record });
        },
      });
      return;
    }
    const points = new Lookup(b.pointRepo);
    await importInChunks(tx, {
      repo: b.detectorRepo,
      prefetch: (chunk, stored) => points.fetch(chunk.map((i) => i.dataPointXid), stored.map((d) => d.dataPointId)),
      newRecord: (item) => b.detectors.newRecord(user, item, points),
      async changesTo(existing, item) {
        await b.detectors.checkEdit(user, existing, points);
        return b.detectors.changesTo(user, existing, item, points);
      },
      same: (before, after) => isDeepStrictEqual(omit(kind, eventDetectorView(before)), omit(kind, eventDetectorView(after))),
    }, items, {
      problem,
      saved(record, before) {
        counts[before ? 'updated' : 'created']++;
        changes.push({ kind, record, before });
      },
    });
  }

  /** Creates or replaces one item through the bound services; notes what the live services must hear. */
  private async applyItem(b: Bound, user: Actor, kind: Exclude<ConfigurationKind, 'dataPoints' | 'eventDetectors'>, item: Item, changes: Change[]): Promise<Outcome> {
    switch (kind) {
      case 'dataSources': {
        const xid = item.xid as string;
        const existing = await b.sources.findByXid(xid);
        const saved = existing ? await b.sources.update(user, xid, item) : await b.sources.create(user, item);
        return this.outcome(changes, existing && omit(kind, dataSourceView(existing)), omit(kind, dataSourceView(saved)), { kind, record: saved });
      }
      case 'users': {
        const username = item.username as string;
        const existing = await b.users.findByUsername(username);
        // A password the user already has is no change (a document with passwords imports twice alike).
        const body = existing && typeof item.password === 'string' && (await verifyPassword(existing.passwordHash, item.password)) ? { ...item, password: undefined } : item;
        const saved = existing ? await b.users.update(user, username, body) : await b.users.create(user, body);
        const same = existing !== undefined && existing.passwordHash === saved.passwordHash;
        return this.outcome(changes, existing && same ? omit(kind, { ...userView(existing) }) : undefined, omit(kind, { ...userView(saved) }), {
          kind,
          record: saved,
          before: existing,
        }, existing !== undefined);
      }
      case 'eventHandlers': {
        const saved = await b.eventHandlers.importItem(user, item);
        if (!saved) return 'unchanged';
        changes.push({ kind });
        return saved.before ? 'updated' : 'created';
      }
      case 'jsonStore': {
        const existing = await b.jsonStore.get(user, item.xid as string).catch(() => undefined);
        const { item: saved } = await b.jsonStore.save(user, JSON.stringify(item));
        const view = (i: { xid: string; name: string; readPermission: string[]; editPermission: string[]; doc: string }) => ({
          xid: i.xid,
          name: i.name,
          readPermission: i.readPermission,
          editPermission: i.editPermission,
          // Bounded: the saved document nests at most JSON_MAX_DEPTH levels, and the deep
          // comparison stops at the shallower of the two.
          jsonData: JSON.parse(i.doc) as unknown,
        });
        return this.outcome(changes, existing && view(existing), view(saved), { kind });
      }
    }
  }

  private outcome(changes: Change[], before: Item | undefined, after: Item, change: Change, existed = before !== undefined): Outcome {
    if (before !== undefined && isDeepStrictEqual(before, after)) return 'unchanged';
    changes.push(change);
    return existed ? 'updated' : 'created';
  }

  /**
   * After the commit: the runtime starts or stops sources, caches forget, other instances hear. Each
   * kind is told at once, so that a source restarts once and the detectors reload once per import,
   * whatever the number of items (API-DECISIONS "Faults and scale").
   */
  private async announce(changes: readonly Change[]): Promise<void> {
    const savedSources = new Set<number>();
    const points: DataPointRecord[] = [];
    const detectors: SavedDetector[] = [];
    for (const c of changes) {
      if (c.kind === 'dataSources') savedSources.add(c.record.id);
      else if (c.kind === 'dataPoints') points.push(c.record);
      else if (c.kind === 'eventDetectors') detectors.push({ saved: c.record, before: c.before });
    }
    for (const id of savedSources) await this.s.sources.announceSaved(id);
    if (points.length > 0) await this.s.points.announceChanged(points, savedSources);
    if (detectors.length > 0) await this.s.detectors.announceSaved(detectors);
    for (const c of changes) if (c.kind === 'users') await this.s.users.announceImported(c.record, c.before);
  }
}

/**
 * Records by XID and by id, fetched a chunk at a time within the import's transaction (the sources
 * of a chunk of points, the points of a chunk of detectors); one not fetched is looked up alone.
 */
class Lookup<T extends { id: number; xid: string; [key: string]: unknown }> {
  private readonly byXid = new Map<string, T | undefined>();
  private readonly byId = new Map<number, T>();

  constructor(private readonly repo: Pick<CrudRepository<T>, 'findMany' | 'findOne'>) {}

  async fetch(xids: readonly unknown[], ids: readonly number[]): Promise<void> {
    const newXids = [...new Set(xids.filter((x): x is string => typeof x === 'string' && !this.byXid.has(x)))];
    const newIds = [...new Set(ids.filter((id) => !this.byId.has(id)))];
    for (const r of [...(await this.repo.findMany('xid', newXids)), ...(await this.repo.findMany('id', newIds))]) this.remember(r);
    for (const xid of newXids) if (!this.byXid.has(xid)) this.byXid.set(xid, undefined);
  }

  async findByXid(xid: string): Promise<T | undefined> {
    if (!this.byXid.has(xid)) this.byXid.set(xid, await this.repo.findOne('xid', xid));
    return this.byXid.get(xid);
  }

  async findById(id: number): Promise<T | undefined> {
    const r = this.byId.get(id) ?? (await this.repo.findOne('id', id));
    if (r) this.remember(r);
    return r;
  }

  private remember(r: T): void {
    this.byXid.set(r.xid, r);
    this.byId.set(r.id, r);
  }
}

/**
 * The document's outline: an object of known keys, each an array of objects with their key field,
 * each nesting as deep as its own route's body may (JSON_MAX_DEPTH).
 */
function checkDocument(body: unknown, maxDepth: number): ConfigurationDocument {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw DomainError.invalid('', `must be an object with any of ${CONFIGURATION_KINDS.join(', ')}`);
  const problems: ValidationMessage[] = [];
  const doc = body as Record<string, unknown>;
  for (const [key, items] of Object.entries(doc)) {
    if (!(CONFIGURATION_KINDS as readonly string[]).includes(key)) {
      problems.push(validationMessage(key, `is not a kind of configuration (${CONFIGURATION_KINDS.join(', ')})`));
      continue;
    }
    if (!Array.isArray(items)) {
      problems.push(validationMessage(key, 'must be an array'));
      continue;
    }
    const keyField = key === 'users' ? 'username' : 'xid';
    const seen = new Map<unknown, number>();
    items.forEach((item: unknown, i) => {
      if (typeof item !== 'object' || item === null || Array.isArray(item)) return problems.push(validationMessage(`${key}[${i}]`, 'must be an object'));
      const id = (item as Item)[keyField];
      if (typeof id !== 'string' || id === '') return problems.push(validationMessage(`${key}[${i}].${keyField}`, 'is required: items are created or replaced by it'));
      // Usernames repeat ignoring case too (they are unique so).
      const seenAs = key === 'users' ? usernameKey(id) : id;
      if (seen.has(seenAs)) return problems.push(validationMessage(`${key}[${i}].${keyField}`, `repeats ${key}[${seen.get(seenAs)}]`));
      seen.set(seenAs, i);
      const deep = itemDepthProblem(item as Item, maxDepth, key === 'jsonStore');
      if (deep) problems.push({ ...deep, property: `${key}[${i}].${deep.property}` });
    });
  }
  if (problems.length > 0) throw DomainError.validation(problems);
  return doc as ConfigurationDocument;
}

/**
 * The imported computed points' contexts, checked once every point of the document is written (in the
 * transaction): a context may name a point further on, and a cycle may run through several items.
 * An item without an XID (it gets a new one, which no other item can name) is not checked here: its
 * runtime warns of a context point that is missing.
 */
async function checkComputedPoints(points: DataPointService, user: Actor, items: readonly Item[], problems: ValidationMessage[]): Promise<void> {
  const indexOf = new Map<string, number>();
  items.forEach((item, i) => {
    const loc = item.pointLocator as Record<string, unknown> | undefined;
    if (typeof item.xid === 'string' && loc !== null && typeof loc === 'object' && Array.isArray(loc.context)) indexOf.set(item.xid, i);
  });
  if (indexOf.size === 0) return;
  for (const [xid, found] of await points.checkImportedContexts(user, [...indexOf.keys()])) {
    for (const p of found) problems.push({ ...p, property: `dataPoints[${indexOf.get(xid)!}].${p.property}` });
  }
}

/** An item's failure as messages placed in the document; anything that is not the item's fault goes on up. */
function itemProblems(err: unknown, at: string): ValidationMessage[] {
  if (!(err instanceof DomainError)) throw err;
  if (err.messages && err.messages.length > 0) {
    return err.messages.map((m) => ({ ...m, property: m.property === '' ? at : m.property.startsWith('[') ? at + m.property : `${at}.${m.property}` }));
  }
  if (err.kind === 'invalid' || err.kind === 'conflict' || err.kind === 'not-found' || err.kind === 'bad-request') return [validationMessage(at, err.message)];
  throw err;
}
