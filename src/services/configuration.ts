// Configuration export and import (API-DECISIONS "Logging, retention, configuration"). Export: every
// source, point, detector, user and JSON store item in the shapes the resources answer, without ids,
// runtime state or secrets, in a fixed order (by XID, users by username), so that export → import →
// export gives the same document. Import: the same document (any subset of the keys) applied in ONE
// metadata transaction by services bound to it, item by item under a savepoint, so that every item's
// problems are collected with their place in the document (`dataPoints[3].pointLocator.offset`); with
// any problem the transaction rolls back and nothing is written. Only after the commit hear the
// runtime, the caches and the other instances of what changed. An item equal to what is stored is
// left alone (neither created nor updated), so importing a document twice changes nothing the second time.
import { isDeepStrictEqual } from 'node:util';
import { DomainError, validationMessage, type ValidationMessage } from '../core/errors.js';
import type { Validator } from '../core/validation.js';
import type { MetadataDb, Queryable } from '../store/metadata/db.js';
import { DataPointsRepository, type DataPointRecord } from '../store/metadata/data-points.js';
import { DataSourcesRepository, type DataSourceRecord } from '../store/metadata/data-sources.js';
import { EventDetectorsRepository, type EventDetectorRecord } from '../store/metadata/event-detectors.js';
import { JsonStoreRepository } from '../store/metadata/json-store.js';
import { UsersRepository, type UserRecord } from '../store/metadata/users.js';
import { dataPointView, DataPointService } from './data-points.js';
import { dataSourceView, DataSourceService } from './data-sources.js';
import { eventDetectorView, EventDetectorService, type SavedDetector } from './event-detectors.js';
import { JsonStoreService } from './json-store.js';
import { verifyPassword } from './passwords.js';
import { assertSuperadmin } from './permissions.js';
import { userView, UserService, type Actor } from './users.js';

export const CONFIGURATION_KINDS = ['dataSources', 'dataPoints', 'eventDetectors', 'users', 'jsonStore'] as const;
export type ConfigurationKind = (typeof CONFIGURATION_KINDS)[number];
type Item = Record<string, unknown>;
export type ConfigurationDocument = Partial<Record<ConfigurationKind, Item[]>>;

/** Everything, in one list query per kind. */
const ALL = 'sort(xid)&limit(100000)';

/** What each kind's export leaves out of the resource's answer: ids, runtime state, derived names. */
const OMIT: Record<ConfigurationKind, readonly string[]> = {
  dataSources: ['id', 'state', 'lastError', 'lastErrorTimestamp', 'lastErrorCleared'],
  dataPoints: ['id', 'dataSourceName', 'dataSourceType', 'lastWarning', 'lastWarningTimestamp', 'lastWarningCleared'],
  eventDetectors: ['id'],
  users: ['id', 'created', 'lastLogin', 'lastPasswordChange'],
  jsonStore: ['id'],
};

const omit = (kind: ConfigurationKind, view: Item): Item => Object.fromEntries(Object.entries(view).filter(([k]) => !OMIT[kind].includes(k)));

export interface ConfigurationServices {
  db: MetadataDb;
  validator: Validator;
  sources: DataSourceService;
  points: DataPointService;
  detectors: EventDetectorService;
  users: UserService;
  jsonStore: JsonStoreService;
}

/** The services of one import, writing through its transaction. */
interface Bound {
  sources: DataSourceService;
  points: DataPointService;
  detectors: EventDetectorService;
  detectorRepo: EventDetectorsRepository;
  users: UserService;
  jsonStore: JsonStoreService;
}

/** What the live services must hear once the import committed. */
type Change =
  | { kind: 'dataSources'; record: DataSourceRecord }
  | { kind: 'dataPoints'; record: DataPointRecord }
  | { kind: 'eventDetectors'; record: EventDetectorRecord; before: EventDetectorRecord | undefined }
  | { kind: 'users'; record: UserRecord; before: UserRecord | undefined }
  | { kind: 'jsonStore' };

type Outcome = 'created' | 'updated' | 'unchanged';

/** Thrown inside the transaction to roll it back when items had problems. */
class ItemsRefused extends Error {}

export class ConfigurationService {
  constructor(private readonly s: ConfigurationServices) {}

  async export(user: Actor, include: readonly ConfigurationKind[] = CONFIGURATION_KINDS): Promise<ConfigurationDocument> {
    assertSuperadmin(user);
    return this.exportWith(this.bind(this.s.db), user, include);
  }

  async import(user: Actor, body: unknown): Promise<{ created: number; updated: number }> {
    assertSuperadmin(user);
    const doc = checkDocument(body);
    const problems: ValidationMessage[] = [];
    const changes: Change[] = [];
    let counts: { created: number; updated: number };
    try {
      counts = await this.s.db.transaction(async (tx) => {
        const bound = this.bind(tx);
        const c = { created: 0, updated: 0 };
        for (const kind of CONFIGURATION_KINDS) {
          for (const [i, item] of (doc[kind] ?? []).entries()) {
            await tx.query('savepoint config_item');
            try {
              const outcome = await this.applyItem(bound, user, kind, item, changes);
              await tx.query('release savepoint config_item');
              if (outcome !== 'unchanged') c[outcome]++;
            } catch (err) {
              await tx.query('rollback to savepoint config_item');
              problems.push(...itemProblems(err, `${kind}[${i}]`));
            }
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

  private bind(db: Queryable): Bound {
    const { validator } = this.s;
    const sources = new DataSourceService(new DataSourcesRepository(db), validator);
    const points = new DataPointService(new DataPointsRepository(db), sources, validator);
    const detectorRepo = new EventDetectorsRepository(db);
    return {
      sources,
      points,
      detectors: new EventDetectorService(detectorRepo, points, validator),
      detectorRepo,
      users: new UserService(new UsersRepository(db), validator),
      jsonStore: new JsonStoreService(new JsonStoreRepository(db), validator),
    };
  }

  private async exportWith(b: Bound, user: Actor, include: readonly ConfigurationKind[]): Promise<ConfigurationDocument> {
    const doc: ConfigurationDocument = {};
    for (const kind of CONFIGURATION_KINDS) {
      if (include.includes(kind)) doc[kind] = await this.exportKind(b, user, kind);
    }
    return doc;
  }

  private async exportKind(b: Bound, user: Actor, kind: ConfigurationKind): Promise<Item[]> {
    const views: Item[] = [];
    const collect = async <T>(list: { batches: AsyncIterable<T[]> }, view: (r: T) => Item | Promise<Item>) => {
      for await (const batch of list.batches) for (const r of batch) views.push(omit(kind, await view(r)));
    };
    switch (kind) {
      case 'dataSources':
        await collect(await b.sources.list(user, ALL), dataSourceView);
        break;
      case 'dataPoints':
        await collect(await b.points.list(user, ALL), dataPointView);
        break;
      case 'eventDetectors':
        await collect(await b.detectors.list(user, ALL), eventDetectorView);
        break;
      case 'users':
        await collect(await b.users.list(user, 'sort(username)&limit(100000)'), (u) => ({ ...userView(u) }));
        break;
      case 'jsonStore':
        await collect(await b.jsonStore.list(user, ALL), async (r) => {
          const item = await b.jsonStore.get(user, r.xid);
          return { xid: item.xid, name: item.name, readPermission: item.readPermission, editPermission: item.editPermission, jsonData: JSON.parse(item.doc) as unknown };
        });
        break;
    }
    return views;
  }

  /** Creates or replaces one item through the bound services; notes what the live services must hear. */
  private async applyItem(b: Bound, user: Actor, kind: ConfigurationKind, item: Item, changes: Change[]): Promise<Outcome> {
    switch (kind) {
      case 'dataSources': {
        const xid = item.xid as string;
        const existing = await b.sources.findByXid(xid);
        const saved = existing ? await b.sources.update(user, xid, item) : await b.sources.create(user, item);
        return this.outcome(changes, existing && omit(kind, dataSourceView(existing)), omit(kind, dataSourceView(saved)), { kind, record: saved });
      }
      case 'dataPoints': {
        const xid = item.xid as string;
        const existing = await b.points.findByXid(xid);
        const saved = existing ? await b.points.update(user, xid, item) : await b.points.create(user, item);
        return this.outcome(changes, existing && omit(kind, dataPointView(existing)), omit(kind, dataPointView(saved)), { kind, record: existing ?? saved });
      }
      case 'eventDetectors': {
        const xid = item.xid as string;
        const existing = await b.detectorRepo.findOne('xid', xid);
        const saved = existing ? await b.detectors.update(user, xid, item) : await b.detectors.create(user, item);
        return this.outcome(changes, existing && omit(kind, eventDetectorView(existing)), omit(kind, eventDetectorView(saved)), { kind, record: saved, before: existing });
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
      case 'jsonStore': {
        const existing = await b.jsonStore.get(user, item.xid as string).catch(() => undefined);
        const { item: saved } = await b.jsonStore.save(user, JSON.stringify(item));
        const view = (i: { xid: string; name: string; readPermission: string[]; editPermission: string[]; doc: string }) => ({
          xid: i.xid,
          name: i.name,
          readPermission: i.readPermission,
          editPermission: i.editPermission,
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

/** The document's outline: an object of known keys, each an array of objects with their key field. */
function checkDocument(body: unknown): ConfigurationDocument {
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
      if (seen.has(id)) return problems.push(validationMessage(`${key}[${i}].${keyField}`, `repeats ${key}[${seen.get(id)}]`));
      seen.set(id, i);
    });
  }
  if (problems.length > 0) throw DomainError.validation(problems);
  return doc as ConfigurationDocument;
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
