// The in-process bus for live point values: the pipeline publishes each value that became a
// point's newest (and each value set through PUT); WebSocket sessions and event detectors listen.
import type { StoredValue } from '../store/values/types.js';

export type LiveValueKind = 'UPDATE' | 'SET';

export interface LiveValue {
  pointId: number;
  xid: string;
  dataType: string;
  value: StoredValue;
  /** The point's previous newest value, when known (for CHANGE detection). */
  previous: StoredValue | undefined;
  kind: LiveValueKind;
}

export type LiveValueListener = (event: LiveValue) => void;

export class PointValueBus {
  private readonly listeners = new Set<LiveValueListener>();

  /** Returns the function that unsubscribes. */
  subscribe(listener: LiveValueListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
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

  get listenerCount(): number {
    return this.listeners.size;
  }
}
