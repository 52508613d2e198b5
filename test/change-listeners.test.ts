// The one place that registers change listeners (src/change-listeners.ts): every service hears the
// steps in the stated order (caches, runtime, cluster, detectors), each awaited before the next.
import assert from 'node:assert/strict';
import { registerChangeListeners, type ChangeListeners } from '../src/change-listeners.js';
import type { DataPointListener, DataPointService } from '../src/services/data-points.js';
import type { DataSourceListener, DataSourceService } from '../src/services/data-sources.js';
import type { EventDetectorListener, EventDetectorService } from '../src/services/event-detectors.js';
import type { EventService } from '../src/services/events.js';
import type { DataPointRecord } from '../src/store/metadata/data-points.js';
import type { DataSourceRecord } from '../src/store/metadata/data-sources.js';
import type { EventDetectorRecord } from '../src/store/metadata/event-detectors.js';

/** Services that keep their listeners and call them one after another, awaited, as the real ones do. */
function services() {
  const points: DataPointListener[] = [];
  const sources: DataSourceListener[] = [];
  const detectors: EventDetectorListener[] = [];
  const disabled: ((ds: DataSourceRecord) => void)[] = [];
  return {
    registered: { points, sources, detectors, disabled },
    fakes: {
      points: { onChange: (l: DataPointListener) => void points.push(l) } as unknown as DataPointService,
      sources: { onChange: (l: DataSourceListener) => void sources.push(l) } as unknown as DataSourceService,
      detectors: { onChange: (l: EventDetectorListener) => void detectors.push(l) } as unknown as EventDetectorService,
      events: { onSourceDisabled: (l: (ds: DataSourceRecord) => void) => void disabled.push(l) } as unknown as EventService,
    },
  };
}

describe('change listeners', () => {
  it('registers caches, runtime, cluster and detectors in that order for points, sources and detectors', async () => {
    const heard: string[] = [];
    const step = (name: string, withDetectors: boolean): ChangeListeners => ({
      points: {
        async pointChanged() {
          await new Promise((r) => setImmediate(r)); // a slow step still goes before the next
          heard.push(`${name}: point`);
        },
      },
      sources: { sourceSaved: () => void heard.push(`${name}: source saved`), sourceDeleted: () => void heard.push(`${name}: source deleted`) },
      ...(withDetectors
        ? {
            detectors: {
              detectorCreated: () => void heard.push(`${name}: detector`),
              detectorUpdated: () => undefined,
              detectorDeleted: () => undefined,
              detectorsSaved: () => undefined,
            },
          }
        : {}),
    });
    const s = services();
    registerChangeListeners(s.fakes, { caches: step('caches', false), runtime: step('runtime', false), cluster: step('cluster', true), detectors: step('detectors', true) });
    for (const l of s.registered.points) await l.pointChanged({} as DataPointRecord);
    for (const l of s.registered.sources) await l.sourceSaved({} as DataSourceRecord);
    for (const l of s.registered.detectors) await l.detectorCreated({} as EventDetectorRecord);
    assert.deepEqual(heard, [
      'caches: point',
      'runtime: point',
      'cluster: point',
      'detectors: point',
      'caches: source saved',
      'runtime: source saved',
      'cluster: source saved',
      'detectors: source saved',
      'cluster: detector',
      'detectors: detector',
    ]);
    assert.equal(s.registered.disabled.length, 0);
  });
});
