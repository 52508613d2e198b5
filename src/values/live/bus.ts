// The in-process bus for live point values: the pipeline publishes each value that became a
// point's newest (and each value set through PUT); WebSocket sessions and event detectors listen.
// Live-value work costs an object per value on the ingest path, so the pipeline does it only for
// points somebody follows: a listener either takes every point, or follows the points it needs.
import type { StoredValue } from '../../store/values/types.js';

export type LiveValueKind = 'UPDATE' | 'SET';

export interface LiveValue {
  pointId: number;
  xid: string;
  dataType: string;
  value: StoredValue;
  /** The point's previous newest value, when known (for CHANGE detection). */
  previous: StoredValue | undefined;
  kind: LiveValueKind;
  /** Accepted by another instance of the cluster and relayed here (services/cluster.ts). */
  remote?: boolean;
}

export type LiveValueListener = (event: LiveValue) => void;

export class PointValueBus {
  private readonly listeners = new Set<LiveValueListener>();
  /** Listeners that take every point. */
  private everyPoint = 0;
  /** Point id → how many follow it. */
  private readonly followers = new Map<number, number>();
  /** Points other instances follow (the cluster relays their values); none when alone. */
  private remoteInterest: (pointId: number) => boolean = () => false;
  private readonly followsChanged = new Set<() => void>();

  /**
   * Returns the function that unsubscribes. `followedOnly`: the listener declares the points it
   * needs with follow() (it still sees every published value, and filters them itself).
   */
  subscribe(listener: LiveValueListener, options: { followedOnly?: boolean } = {}): () => void {
    const everyPoint = options.followedOnly !== true;
    this.listeners.add(listener);
    if (everyPoint && this.everyPoint++ === 0) this.tellFollowsChanged();
    let subscribed = true;
    return () => {
      if (!subscribed) return;
      subscribed = false;
      this.listeners.delete(listener);
      if (everyPoint && --this.everyPoint === 0) this.tellFollowsChanged();
    };
  }

  /** Asks for the point's live values until the returned function is called. */
  follow(pointId: number): () => void {
    const n = (this.followers.get(pointId) ?? 0) + 1;
    this.followers.set(pointId, n);
    if (n === 1) this.tellFollowsChanged();
    let following = true;
    return () => {
      if (!following) return;
      following = false;
      const n = (this.followers.get(pointId) ?? 1) - 1;
      if (n > 0) this.followers.set(pointId, n);
      else {
        this.followers.delete(pointId);
        this.tellFollowsChanged();
      }
    };
  }

  /** Whether anybody wants this point's live values, here or on another instance. */
  isLive(pointId: number): boolean {
    return this.everyPoint > 0 || this.followers.has(pointId) || this.remoteInterest(pointId);
  }

  /** Whether a listener of this instance wants the point's live values. */
  isFollowedHere(pointId: number): boolean {
    return this.everyPoint > 0 || this.followers.has(pointId);
  }

  /** What this instance follows: every point, or these. */
  follows(): { all: boolean; points: number[] } {
    return { all: this.everyPoint > 0, points: [...this.followers.keys()] };
  }

  /** Called when the set of followed points (or every-point listeners) changes. */
  onFollowsChanged(listener: () => void): () => void {
    this.followsChanged.add(listener);
    return () => this.followsChanged.delete(listener);
  }

  /** The cluster says which points other instances follow. */
  setRemoteInterest(interest: (pointId: number) => boolean): void {
    this.remoteInterest = interest;
  }

  private tellFollowsChanged(): void {
    for (const l of this.followsChanged) l();
  }

  /** A listener that throws must not stop the others nor the writer. */
  publish(event: LiveValue): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // listeners report their own failures
      }
    }
  }
}
