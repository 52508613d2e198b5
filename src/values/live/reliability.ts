// Which points their source cannot read now (a Modbus device off or refusing a register, an MQTT
// broker gone, a point not read yet since its source started): such a point is "unreliable" from
// the first failure until its next good value. The data source runtime marks and clears the points
// of the sources it runs here ("local" marks); the cluster link relays those to the other instances
// and applies theirs here, so every instance's API and WebSockets tell the same. Memory only: the
// state is re-derived whenever a source starts (runtime/data-sources.ts), so there is nothing to
// keep across a restart, and a flapping device costs no metadata write.

/** Why and since when a point is unreliable. */
export interface Unreliability {
  /** Epoch ms of the first failure of the episode (a later failure does not move it). */
  since: number;
  /** The newest failure's text. */
  reason: string;
}

/** The read-only fields that show it (data point views, current values, WebSocket payloads). */
export interface UnreliableFields {
  unreliable: boolean;
  unreliableSince: number | null;
  unreliableReason: string | null;
}

/** Told the points whose mark changed (set, cleared, or its reason changed); `local`: by this instance's runtime. */
export type ReliabilityListener = (pointIds: readonly number[], local: boolean) => void;

/** Longer reasons are cut: a reason travels in cluster messages of at most 8,000 bytes. */
export const MAX_REASON_LENGTH = 500;

export function unreliableFields(mark: Unreliability | undefined): UnreliableFields {
  return mark ? { unreliable: true, unreliableSince: mark.since, unreliableReason: mark.reason } : { unreliable: false, unreliableSince: null, unreliableReason: null };
}

/** The same fields as JSON members (no braces), spliced into answers written as text. */
export function unreliableJsonMembers(mark: Unreliability | undefined): string {
  return mark ? `"unreliable":true,"unreliableSince":${mark.since},"unreliableReason":${JSON.stringify(mark.reason)}` : '"unreliable":false';
}

export class PointReliability {
  private readonly marks = new Map<number, Unreliability>();
  /** The marked points whose source runs here. */
  private readonly local = new Set<number>();
  private readonly listeners = new Set<ReliabilityListener>();

  get(pointId: number): Unreliability | undefined {
    return this.marks.get(pointId);
  }

  has(pointId: number): boolean {
    return this.marks.has(pointId);
  }

  /** How many points are marked (0: a good value needs no look-up). */
  get size(): number {
    return this.marks.size;
  }

  onChange(listener: ReliabilityListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The runtime here cannot read these points: marked, or their reason updated (since kept). */
  mark(pointIds: readonly number[], reason: string, now = Date.now()): void {
    const text = reason.length > MAX_REASON_LENGTH ? `${reason.slice(0, MAX_REASON_LENGTH - 1)}…` : reason;
    const changed: number[] = [];
    for (const id of pointIds) {
      const known = this.marks.get(id);
      this.local.add(id);
      if (known?.reason === text) continue;
      this.marks.set(id, { since: known?.since ?? now, reason: text });
      changed.push(id);
    }
    this.tell(changed, true);
  }

  /** These points were read, or their source stopped here: no longer unreliable. */
  clear(pointIds: Iterable<number>): void {
    const changed: number[] = [];
    for (const id of pointIds) {
      this.local.delete(id);
      if (this.marks.delete(id)) changed.push(id);
    }
    this.tell(changed, true);
  }

  /** The marks of the sources run here, for an instance that asks (cluster `hello`). */
  localMarks(): [number, Unreliability][] {
    return [...this.local].map((id) => [id, this.marks.get(id)!]);
  }

  /** Another instance marked these points. One its source runs here is decided here (a stale message). */
  markedElsewhere(marks: readonly (readonly [number, number])[], reason: string): void {
    const changed: number[] = [];
    for (const [id, since] of marks) {
      if (this.local.has(id)) continue;
      const known = this.marks.get(id);
      if (known?.reason === reason && known.since === since) continue;
      this.marks.set(id, { since, reason });
      changed.push(id);
    }
    this.tell(changed, false);
  }

  /** Another instance cleared these points. */
  clearedElsewhere(pointIds: readonly number[]): void {
    this.tell(
      pointIds.filter((id) => !this.local.has(id) && this.marks.delete(id)),
      false,
    );
  }

  /** Messages from the other instances may have been lost: forget theirs until they tell them again. */
  forgetElsewhere(): void {
    this.tell(
      [...this.marks.keys()].filter((id) => !this.local.has(id) && this.marks.delete(id)),
      false,
    );
  }

  private tell(pointIds: readonly number[], local: boolean): void {
    if (pointIds.length === 0) return;
    for (const l of this.listeners) {
      try {
        l(pointIds, local);
      } catch {
        // listeners report their own failures
      }
    }
  }
}
