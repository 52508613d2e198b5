// Per-point warnings: a value a source could not read for one point (an unparsable MQTT payload) is
// that point's problem, not the source's. It is counted (metrics), stored on the point as
// lastWarning/lastWarningTimestamp/lastWarningCleared so every instance's API shows it, and cleared
// by the point's next good value. A device sending garbage many times a second must not become a
// metadata write (or a log line) per message: each point's state is written at most once per
// WRITE_INTERVAL_MS, the newest state winning.
import type { Logger } from 'pino';
import { forEachLimited } from '../core/limited.js';
import type { DataPointRecord, PointWarning } from '../store/metadata/data-points.js';

/** Warnings written at once when a source stops. */
const FLUSH_CONCURRENCY = 8;

export const WRITE_INTERVAL_MS = 5_000;

export interface WarningStore {
  setWarning(pointId: number, warning: PointWarning): Promise<void>;
}

interface PointState {
  point: DataPointRecord;
  sourceXid: string;
  warning: PointWarning;
  /** The stored state differs from `warning`. */
  dirty: boolean;
  lastWriteAt: number;
  timer: NodeJS.Timeout | undefined;
  writing: Promise<void> | undefined;
}

export class PointWarnings {
  private readonly states = new Map<number, PointState>();
  /** Points whose newest warning is not cleared yet: a good value of one of them clears it. */
  private readonly open = new Set<number>();
  /** Warnings since start, per source xid (metrics). */
  readonly counts = new Map<string, number>();

  constructor(
    private readonly store: WarningStore,
    private readonly log: Pick<Logger, 'warn'>,
    private readonly intervalMs = WRITE_INTERVAL_MS,
  ) {}

  warn(point: DataPointRecord, sourceXid: string, message: string, now = Date.now()): void {
    this.counts.set(sourceXid, (this.counts.get(sourceXid) ?? 0) + 1);
    this.open.add(point.id);
    this.update(point, sourceXid, { message, timestamp: now, cleared: false });
  }

  /** Whether any point has an open warning (so accept() can skip the check for the rest). */
  get anyOpen(): boolean {
    return this.open.size > 0;
  }

  /** A good value arrived for the point: its open warning is cleared. */
  goodValue(pointId: number): void {
    if (!this.open.delete(pointId)) return;
    const s = this.states.get(pointId);
    if (s) this.update(s.point, s.sourceXid, { ...s.warning, cleared: true });
  }

  /** Writes what is pending now (a source stopping). */
  async flush(): Promise<void> {
    await forEachLimited([...this.states.values()], FLUSH_CONCURRENCY, (s) => this.write(s));
  }

  private update(point: DataPointRecord, sourceXid: string, warning: PointWarning): void {
    const s = this.states.get(point.id) ?? { point, sourceXid, warning, dirty: false, lastWriteAt: 0, timer: undefined, writing: undefined };
    s.warning = warning;
    s.dirty = true;
    this.states.set(point.id, s);
    if (s.timer) return;
    const wait = s.lastWriteAt + this.intervalMs - Date.now();
    if (wait <= 0) void this.write(s);
    else {
      s.timer = setTimeout(() => void this.write(s), wait);
      s.timer.unref();
    }
  }

  /** One write of the point's newest state; a failing not-cleared warning is also logged then (so once per interval). */
  private async write(s: PointState): Promise<void> {
    clearTimeout(s.timer);
    s.timer = undefined;
    await s.writing;
    if (!s.dirty) return;
    s.dirty = false;
    s.lastWriteAt = Date.now();
    const warning = s.warning;
    if (!warning.cleared) this.log.warn({ source: s.sourceXid, point: s.point.xid, warning: warning.message }, 'data point warning');
    s.writing = this.store.setWarning(s.point.id, warning).catch((err: unknown) => {
      this.log.warn({ err, point: s.point.xid }, 'storing a data point warning failed');
    });
    await s.writing;
  }
}
