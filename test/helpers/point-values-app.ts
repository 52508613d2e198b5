// What the /point-values suites (test/point-values*.test.ts, one file per route) share: the service on a
// metadata engine with its users and two data sources, the calls every suite makes (create a point,
// write, read raw and latest), the constants and the checks of numbers and 400s.
import assert from 'node:assert/strict';
import { assertError, type ErrorBodyShape } from './assertions.js';
import { startTestApp, type TestApp } from './app.js';
import { ApiClient, createRoleUsers, loggedIn, type Response } from './client.js';
import type { MetadataEngine } from './engines.js';
import { STATISTIC_KEY } from './rollup-checks.js';

export const PV = '/rest/latest/point-values';
export const DP = '/rest/latest/data-points';
export const DS = '/rest/latest/data-sources';
export const PASSWORD = 'secret-password-1';
export const MiB = 1024 * 1024;

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;
/** 2024-01-01T00:00:00Z: the rollup series lives around here, safely in the past. */
export const T0 = Date.UTC(2024, 0, 1);

export type DataType = 'NUMERIC' | 'MULTISTATE' | 'BINARY' | 'ALPHANUMERIC';

export interface RawValue {
  timestamp: number;
  value: number | boolean | string | null;
  annotation?: string;
}

export interface PeriodValue<T = unknown> {
  timestamp: number;
  value: T;
}

export interface SetResult {
  xid: string;
  dataType: string;
  value: unknown;
  timestamp: number;
  annotation: string | null;
}

export interface BulkEntry {
  xid: string;
  value?: unknown;
  timestamp?: unknown;
  dataType?: string;
  annotation?: unknown;
}

export const ALL_KEYS = Object.values(STATISTIC_KEY);

export function near(actual: unknown, expected: number | null, what: string): void {
  if (expected === null) {
    assert.equal(actual, null, `${what}: expected null, got ${JSON.stringify(actual)}`);
    return;
  }
  assert.equal(typeof actual, 'number', `${what}: expected ${expected}, got ${JSON.stringify(actual)}`);
  const diff = Math.abs((actual as number) - expected);
  assert.ok(diff <= 1e-9 * Math.max(1, Math.abs(expected)), `${what}: ${String(actual)} != ${expected}`);
}

/** The named parameter appears in the 400's message. */
export function assertBadParam(res: Response, name: string): ErrorBodyShape {
  const body = assertError(res, 400, 4005, 'BAD_REQUEST');
  assert.ok(body.message.includes(name), `message does not name ${name}: ${body.message}`);
  return body;
}

export function query(params: Record<string, string | number | boolean | undefined>): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(params)) if (v !== undefined) parts.push(`${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`);
  return parts.join('&');
}

export const SOURCE = 'pv-src';
export const OFF_SOURCE = 'pv-src-off';

/**
 * One suite's service and users. The fields are set by the `before` hook usePointValuesApp adds; the
 * calls are arrow functions, so a suite can take them apart (`const { createPoint } = pv`).
 */
export class PointValuesApp {
  app!: TestApp;
  admin!: ApiClient;
  /** role "user" only: reads public points, sets and edits nothing. */
  viewer!: ApiClient;
  /** roles "user" and "operators": sets the default test points, edits none of them. */
  operator!: ApiClient;
  private seq = 0;

  readonly unique = (prefix: string): string => `${prefix}${++this.seq}`;

  /** Creates a settable point (set: operators, read: user, edit: superadmin) and returns its xid. */
  readonly createPoint = async (dataType: DataType, extra: Record<string, unknown> = {}, locator: Record<string, unknown> = {}): Promise<string> => {
    const xid = this.unique(`pv-${dataType.toLowerCase()}-`);
    const res = await this.admin.post(DP, {
      xid,
      name: xid,
      dataSourceXid: SOURCE,
      pointLocator: { dataType, settable: true, changeType: 'NO_CHANGE', ...locator },
      setPermission: ['operators'],
      ...extra,
    });
    assert.equal(res.status, 201, res.text);
    return xid;
  };

  readonly bulk = async (entries: BulkEntry[], as = this.admin): Promise<Response<{ written: number }>> => {
    return as.post<{ written: number }>(PV, entries);
  };

  readonly seed = async (xid: string, values: [ts: number, value: unknown, annotation?: string][]): Promise<void> => {
    const res = await this.bulk(values.map(([timestamp, value, annotation]) => ({ xid, timestamp, value, ...(annotation === undefined ? {} : { annotation }) })));
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { written: values.length });
  };

  readonly single = async (xid: string, params: Record<string, string | number | boolean | undefined>, as = this.admin): Promise<Response> => {
    return as.get(`${PV}/single/${encodeURIComponent(xid)}?${query(params)}`);
  };

  readonly raw = async (xid: string, from: number, to: number, as = this.admin): Promise<RawValue[]> => {
    const res = await this.single(xid, { from, to }, as);
    assert.equal(res.status, 200, res.text);
    return res.body as RawValue[];
  };

  /** The latest values; the newest (the current one) says it is reliable, as no source marks these points. */
  readonly latest = async (xid: string, limit?: number, as = this.admin): Promise<RawValue[]> => {
    const res = await as.get<(RawValue & { unreliable?: boolean })[]>(`${PV}/latest/${encodeURIComponent(xid)}${limit === undefined ? '' : `?limit=${limit}`}`);
    assert.equal(res.status, 200, res.text);
    return res.body.map(({ unreliable, ...v }, i) => {
      assert.equal(unreliable, i === 0 ? false : undefined, 'only the current value says whether it is reliable');
      return v;
    });
  };
}

/** One service per engine for every point-value suite of the run, as when they were one file. */
const shared = new Map<MetadataEngine, { pv: PointValuesApp; started?: Promise<void> }>();

async function start(pv: PointValuesApp, engine: MetadataEngine): Promise<void> {
  pv.app = await startTestApp(engine);
  pv.admin = await loggedIn(pv.app.url, 'admin', 'admin');
  ({ viewer: pv.viewer, operator: pv.operator } = await createRoleUsers(pv.admin, PASSWORD));
  let res = await pv.admin.post(DS, { xid: SOURCE, name: 'Historian device', modelType: 'VIRTUAL', enabled: true });
  assert.equal(res.status, 201, res.text);
  res = await pv.admin.post(DS, { xid: OFF_SOURCE, name: 'Switched off', modelType: 'VIRTUAL', enabled: false });
  assert.equal(res.status, 201, res.text);
}

/**
 * The service on `engine` (admin, viewer, operator; an enabled source SOURCE and a disabled one
 * OFF_SOURCE), started before the first suite that asks for it runs and shared by every later one:
 * a start costs seconds (metadata, value store, password hashes), the suites create their own points.
 * Stopped after the whole run (a root hook).
 */
export function usePointValuesApp(engine: MetadataEngine): PointValuesApp {
  let entry = shared.get(engine);
  if (!entry) shared.set(engine, (entry = { pv: new PointValuesApp() }));
  const { pv } = entry;
  const own = entry;
  before(() => (own.started ??= start(pv, engine)));
  return pv;
}

after(async () => {
  for (const { pv, started } of shared.values()) {
    if (!started) continue;
    await started.catch(() => undefined);
    await pv.app?.stop();
  }
});
