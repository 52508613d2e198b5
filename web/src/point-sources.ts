// The points a list shows, ready to be followed live: each with its renderer, unit and what its
// source says about staleness (value-format.ts), the sources read once for the whole list.
import { get, rqlValue, type DataPoint, type DataSource, type List } from './api.js';
import type { LivePoint } from './point-values-live.js';
import { sourceNote } from './value-format.js';

/** Sources read per request: their XIDs go in the query string. */
const SOURCES_PER_READ = 100;

/** The sources of these points by XID (one that cannot be read is left out: its points are never marked stale). */
export async function sourcesOf(points: readonly DataPoint[]): Promise<Map<string, DataSource>> {
  const xids = [...new Set(points.map((p) => p.dataSourceXid))];
  const out = new Map<string, DataSource>();
  for (let i = 0; i < xids.length; i += SOURCES_PER_READ) {
    const part = xids.slice(i, i + SOURCES_PER_READ);
    const list = await get<List<DataSource>>(`/data-sources?in(xid,${part.map(rqlValue).join(',')})&limit(${part.length})`);
    for (const ds of list.items) out.set(ds.xid, ds);
  }
  return out;
}

export function livePoint(p: DataPoint, sources: ReadonlyMap<string, DataSource>): LivePoint {
  return { xid: p.xid, unit: p.unit, dataType: p.pointLocator.dataType, textRenderer: p.textRenderer, source: sourceNote(sources.get(p.dataSourceXid), p.pointLocator.changeType) };
}

/** The points as the live values follow them; without their sources (not readable) none is marked stale. */
export async function livePoints(points: readonly DataPoint[]): Promise<LivePoint[]> {
  const sources = await sourcesOf(points).catch(() => new Map<string, DataSource>());
  return points.map((p) => livePoint(p, sources));
}
