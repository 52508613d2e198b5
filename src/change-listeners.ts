// The one place that registers who hears of saved and deleted points, sources and detectors, in
// the order they hear it (each service awaits its listeners one after another, in registration order):
//   1. the point-value caches forget the point (a value written after the answer meets it as it now is);
//   2. the data source runtime restarts the point's source with its new point list;
//   3. the other instances are told (their caches, their sources' runs, their detectors);
//   4. the event detectors follow the change (last: they load what the steps before left in place).
// Detector definitions have no caches or sources: the other instances are told, then the detectors follow.
import type { DataPointListener, DataPointService } from './services/data-points.js';
import type { DataSourceListener, DataSourceService } from './services/data-sources.js';
import type { EventDetectorListener, EventDetectorService } from './services/event-detectors.js';
import type { EventService } from './services/events.js';
import type { DataSourceRecord } from './store/metadata/data-sources.js';

export interface ChangeListeners {
  points: DataPointListener;
  sources: DataSourceListener;
  detectors?: EventDetectorListener;
  /** A source's events ended as when it is disabled (events.onSourceDisabled). */
  sourceDisabled?: (ds: DataSourceRecord) => void;
}

/** The listeners of each step, in the order of the header; registered once, for the process's life. */
export function registerChangeListeners(
  services: { points: DataPointService; sources: DataSourceService; detectors: EventDetectorService; events: EventService },
  steps: { caches: ChangeListeners; runtime: ChangeListeners; cluster: ChangeListeners; detectors: ChangeListeners },
): void {
  for (const step of [steps.caches, steps.runtime, steps.cluster, steps.detectors]) {
    services.points.onChange(step.points);
    services.sources.onChange(step.sources);
    if (step.detectors) services.detectors.onChange(step.detectors);
    if (step.sourceDisabled) services.events.onSourceDisabled(step.sourceDisabled);
  }
}
