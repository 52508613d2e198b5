// Several instances as one service: what this instance tells the others over the cluster channel
// (store/cluster/channel.ts), and what it does when they tell it something.
//
// - `w` written: values of these series became durable or were deleted (series → earliest ts):
//   latest values and hourly buckets cached of them are dropped.
// - `live`: a live value of a point another instance follows (its WebSockets or its detectors);
//   relayed onto that instance's bus. Which points each instance follows comes in `follows`
//   announcements (in parts of FOLLOWS_PART ids), repeated every FOLLOWS_EVERY_MS and on `hello`;
//   an instance not heard of for FOLLOWS_EXPIRE_MS no longer counts.
// - `ev`: an event raised, acknowledged, returned to normal or commented; told to this instance's
//   listeners. Without its comments, which can be far more than a NOTIFY holds: `n` says how many it
//   has (the receiver then reads it), `k` is the id of the comment the action added.
// - `user`, `sess`, `point`: caches to forget; `user` may carry what live connections must hear.
//   `points`: many points changed at once (an import), `[id, xid]` pairs in parts.
// - `keys`: the token signing keys were reset; every token issued before stops working here too.
// - `unrel`: points the sources run here cannot read (`{r: reason, m: [[id, since]…]}`) or can again
//   (`{c: [id…]}`); all of them again on `hello`, since a new or resynced instance knows none.
// The channel may lose messages while its connection is down; `resync` then drops every cache.
import type { Logger } from 'pino';
import { RESYNC, type ClusterChannel } from '../store/cluster/index.js';
import type { StoredValue } from '../store/values/types.js';
import type { EventAction, EventComment, EventRecord, EventService } from './events.js';
import type { LiveValue, LiveValueKind } from '../values/live/bus.js';
import type { Unreliability } from '../values/live/reliability.js';
import type { PointValueService } from './point-values.js';
import type { SessionService } from './sessions.js';
import type { TokenService } from './tokens.js';
import type { UserEvent, UserService } from './users.js';
import type { DataPointRecord } from '../store/metadata/data-points.js';

const FOLLOWS_PART = 500;
const FOLLOWS_EVERY_MS = 5_000;
const FOLLOWS_EXPIRE_MS = 15_000;
const WRITTEN_PART = 200;
const SESSIONS_PART = 100;
/** Bytes of a message body made of parts: a NOTIFY payload holds 8,000 with the sender and topic. */
const PART_BYTES = 6_000;
/** Points per `unrel` message: 150 × [id, since] (≤ 27 bytes each) and a reason of ≤ 500 characters fit in a NOTIFY. */
const UNRELIABLE_PART = 150;

interface RemoteFollows {
  all: boolean;
  points: Set<number>;
  /** The announcement being received, shown once its last part arrived. */
  next?: { generation: number; all: boolean; points: Set<number> };
  heard: number;
}

export interface ClusterServices {
  pointValues: PointValueService;
  users: UserService;
  sessions: SessionService;
  tokens: TokenService;
  events: EventService;
  /** Point changes, for the detector runtime and the point caches. */
  pointChanged(pointId: number, oldXid: string): void;
  /** Many points changed in place at once (XIDs kept), for the detector runtime. */
  pointsChanged(pointIds: readonly number[]): void;
}

type LiveBody = { p: number; x: string; d: string; k: LiveValueKind; v: StoredValue; pr: StoredValue | null };
type UnreliableBody = { r: string; m: [number, number][] } | { c: number[] };

export class ClusterLink {
  private readonly remote = new Map<string, RemoteFollows>();
  private generation = 0;
  private announceTimer: NodeJS.Timeout | undefined;
  private marksTimer: NodeJS.Timeout | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private readonly off: (() => void)[] = [];

  constructor(
    private readonly channel: ClusterChannel,
    private readonly s: ClusterServices,
    private readonly log: Pick<Logger, 'warn'>,
  ) {
    // Alone (PGlite), there is nobody to tell: nothing is wired, nothing costs the ingest path.
    if (!channel.shared) return;
    const { pointValues, users, sessions, tokens, events } = s;
    const bus = pointValues.bus;
    bus.setRemoteInterest((id) => this.followedElsewhere(id));
    this.off.push(bus.onFollowsChanged(() => this.announceSoon()));
    // Relays values this instance accepted; relayed ones are not sent on again.
    this.off.push(bus.subscribe((v) => this.relay(v), { followedOnly: true }));
    pointValues.onWritten((earliest) => this.written(earliest));
    users.onForgotten((id) => this.send('user', { id }));
    users.onUserEvent((id, ev, local) => local && this.send('user', { id, ev }));
    // In parts: a user's every session can be hundreds of hashes, a NOTIFY payload holds 8,000 bytes.
    sessions.onEnded((hashes) => {
      for (let i = 0; i < hashes.length; i += SESSIONS_PART) this.send('sess', hashes.slice(i, i + SESSIONS_PART));
    });
    this.off.push(events.subscribe((action, event, local, comment) => local && this.send('ev', relayedEvent(action, event, comment))));
    this.off.push(tokens.onKeysReset((local) => local && this.send('keys', 0)));
    const { reliability } = pointValues;
    this.off.push(reliability.onChange((ids, local) => local && this.tellReliability(ids)));

    this.on('w', (body) => pointValues.changedElsewhere(new Map(body as [number, number][])));
    this.on('live', (body) => this.received(body as LiveBody));
    this.on('follows', (body, from) => this.follows(from, body as { g: number; i: number; n: number; all: boolean; p: number[] }));
    this.on('hello', () => {
      this.announceSoon();
      this.announceMarksSoon();
    });
    this.on('unrel', (body) => {
      const b = body as UnreliableBody;
      if ('c' in b) reliability.clearedElsewhere(b.c);
      else reliability.markedElsewhere(b.m, b.r);
    });
    this.on('user', (body) => {
      const { id, ev } = body as { id: number; ev?: UserEvent };
      users.changedElsewhere(id, ev);
    });
    this.on('sess', (body) => sessions.endedElsewhere(body as string[]));
    this.on('keys', () => void tokens.keysResetElsewhere().catch((err: unknown) => this.log.warn({ err }, 'reloading the token keys failed')));
    this.on('ev', (body) => {
      const { a, e, n, k } = body as EventBody;
      events.publishedElsewhere(a, e, { count: n ?? 0, ...(k === undefined ? {} : { addedId: k }) });
    });
    this.on('point', (body) => {
      const { id, xid } = body as { id: number; xid: string };
      pointValues.forgetPoint({ id, xid });
      events.forgetPermissions();
      s.pointChanged(id, xid);
    });
    this.on('points', (body) => {
      const pairs = body as [number, string][];
      for (const [id, xid] of pairs) pointValues.forgetPoint({ id, xid });
      events.forgetPermissions();
      s.pointsChanged(pairs.map(([id]) => id));
    });
    this.off.push(
      channel.subscribe(RESYNC, () => {
        pointValues.changedElsewhere();
        users.forgetAll();
        sessions.forgetAll();
        events.forgetPermissions();
        reliability.forgetElsewhere(); // a clear may have been lost: the others tell theirs again on hello
        this.send('hello', 0);
        this.announceSoon();
      }),
    );
    this.heartbeat = setInterval(() => this.announce(), FOLLOWS_EVERY_MS);
    this.heartbeat.unref();
    this.send('hello', 0);
    this.announce();
  }

  /** A point was changed through this instance (its XID before the change). */
  pointChanged(point: Pick<DataPointRecord, 'id' | 'xid'>): void {
    this.send('point', { id: point.id, xid: point.xid });
  }

  /** Many points changed through this instance at once (an import; XIDs kept). */
  pointsChanged(points: readonly Pick<DataPointRecord, 'id' | 'xid'>[]): void {
    this.sendInParts('points', points.map((p) => [p.id, p.xid]));
  }

  close(): void {
    clearInterval(this.heartbeat);
    clearTimeout(this.announceTimer);
    clearTimeout(this.marksTimer);
    for (const off of this.off) off();
  }

  private send(topic: string, body: unknown): void {
    this.channel.tell(topic, JSON.stringify(body));
  }

  /** Sends `items` as JSON arrays of as many as fit in a payload. */
  private sendInParts(topic: string, items: readonly unknown[]): void {
    let part: string[] = [];
    let bytes = 2;
    for (const item of items) {
      const text = JSON.stringify(item);
      const size = Buffer.byteLength(text) + 1;
      if (part.length > 0 && bytes + size > PART_BYTES) {
        this.channel.tell(topic, `[${part.join(',')}]`);
        part = [];
        bytes = 2;
      }
      part.push(text);
      bytes += size;
    }
    if (part.length > 0) this.channel.tell(topic, `[${part.join(',')}]`);
  }

  private on(topic: string, handle: (body: unknown, from: string) => void): void {
    this.off.push(
      this.channel.subscribe(topic, (text, from) => {
        try {
          handle(JSON.parse(text), from);
        } catch (err) {
          this.log.warn({ err, topic }, 'cluster message not understood');
        }
      }),
    );
  }

  private written(earliest: ReadonlyMap<number, number>): void {
    const pairs = [...earliest];
    for (let i = 0; i < pairs.length; i += WRITTEN_PART) this.send('w', pairs.slice(i, i + WRITTEN_PART));
  }

  /** Marks set or cleared by this instance's runtime, in parts. */
  private tellReliability(ids: readonly number[]): void {
    const { reliability } = this.s.pointValues;
    const cleared: number[] = [];
    const marked: [number, Unreliability][] = [];
    for (const id of ids) {
      const mark = reliability.get(id);
      if (mark) marked.push([id, mark]);
      else cleared.push(id);
    }
    for (let i = 0; i < cleared.length; i += UNRELIABLE_PART) this.send('unrel', { c: cleared.slice(i, i + UNRELIABLE_PART) });
    this.sendMarks(marked);
  }

  /** Every mark of the sources run here, for instances that just said hello (once for a burst of them). */
  private announceMarksSoon(): void {
    this.marksTimer ??= setTimeout(() => {
      this.marksTimer = undefined;
      this.sendMarks(this.s.pointValues.reliability.localMarks());
    }, 20);
  }

  /** Marks grouped by reason (a source's points share theirs), in parts. */
  private sendMarks(marks: Iterable<readonly [number, Unreliability]>): void {
    const byReason = new Map<string, [number, number][]>();
    for (const [id, { since, reason }] of marks) {
      let list = byReason.get(reason);
      if (!list) byReason.set(reason, (list = []));
      list.push([id, since]);
    }
    for (const [r, m] of byReason) {
      for (let i = 0; i < m.length; i += UNRELIABLE_PART) this.send('unrel', { r, m: m.slice(i, i + UNRELIABLE_PART) });
    }
  }

  private relay(v: LiveValue): void {
    if (v.remote || !this.followedElsewhere(v.pointId)) return;
    const body: LiveBody = { p: v.pointId, x: v.xid, d: v.dataType, k: v.kind, v: v.value, pr: v.previous ?? null };
    this.send('live', body);
  }

  private received(b: LiveBody): void {
    if (!this.s.pointValues.bus.isFollowedHere(b.p)) return;
    this.s.pointValues.bus.publish({ pointId: b.p, xid: b.x, dataType: b.d, kind: b.k, value: b.v, previous: b.pr ?? undefined, remote: true });
  }

  // ---- who follows what ------------------------------------------------------------------------

  private followedElsewhere(pointId: number): boolean {
    if (this.remote.size === 0) return false;
    const now = Date.now();
    for (const [id, f] of this.remote) {
      if (now - f.heard > FOLLOWS_EXPIRE_MS) {
        this.remote.delete(id);
        continue;
      }
      if (f.all || f.points.has(pointId)) return true;
    }
    return false;
  }

  private announceSoon(): void {
    this.announceTimer ??= setTimeout(() => {
      this.announceTimer = undefined;
      this.announce();
    }, 20);
  }

  /** Sends what this instance follows, in parts; the others replace what they knew once all arrived. */
  private announce(): void {
    const { all, points } = this.s.pointValues.bus.follows();
    const g = ++this.generation;
    const n = Math.max(1, Math.ceil(points.length / FOLLOWS_PART));
    for (let i = 0; i < n; i++) this.send('follows', { g, i, n, all, p: points.slice(i * FOLLOWS_PART, (i + 1) * FOLLOWS_PART) });
  }

  private follows(from: string, m: { g: number; i: number; n: number; all: boolean; p: number[] }): void {
    let f = this.remote.get(from);
    if (!f) this.remote.set(from, (f = { all: false, points: new Set(), heard: Date.now() }));
    if (!f.next || f.next.generation !== m.g) f.next = { generation: m.g, all: m.all, points: new Set() };
    for (const id of m.p) f.next.points.add(id);
    if (m.i === m.n - 1) {
      f.all = f.next.all;
      f.points = f.next.points;
      f.next = undefined;
      f.heard = Date.now();
    }
  }
}

/** An `ev` message: the event without its comments (`e`), how many it has (`n`), the one added (`k`). */
interface EventBody {
  a: EventAction;
  e: EventRecord;
  n?: number;
  k?: number;
}

function relayedEvent(action: EventAction, event: EventRecord, comment: EventComment | undefined): EventBody {
  const { comments, ...rest } = event;
  return { a: action, e: { ...rest, comments: [] }, n: comments.length, ...(comment ? { k: comment.id } : {}) };
}
