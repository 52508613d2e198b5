// Requests that keep going while a store server is frozen or cut: a writer (bulk point values), readers
// (a rollup, a raw page, a metadata list) and /health, each request timed, and every value the service
// acknowledged (200) remembered, to be read back afterwards.
import assert from 'node:assert/strict';
import { ApiClient, type Response } from './client.js';

const API = '/rest/latest';

export type RequestKind = 'write' | 'rollup' | 'raw' | 'metadata' | 'health';

export interface Outcome {
  kind: RequestKind;
  status: number;
  /** Date.now() when it was sent and when it was answered. */
  started: number;
  ended: number;
  body: string;
}

export const took = (o: Outcome): number => o.ended - o.started;

export class StoreLoad {
  readonly outcomes: Outcome[] = [];
  /** Timestamp → value of every value a write was answered 200 for. */
  readonly acknowledged = new Map<number, number>();
  private seq = 0;
  private running = false;
  private loops: Promise<void>[] = [];

  /** `base`: the first value's timestamp; values are 1 s apart, value = its sequence number. */
  constructor(
    private readonly client: ApiClient,
    private readonly healthClient: ApiClient,
    private readonly xid: string,
    private readonly base: number,
    private readonly withMetadataReads = true,
  ) {}

  start(): void {
    this.running = true;
    this.loops = [this.loop(() => this.write()), this.loop(() => this.read()), this.loop(() => this.timed('health', () => this.healthClient.get('/health')), 250)];
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  /** Requests that were under way at some time in [from, to). */
  during(from: number, to: number, kind?: RequestKind): Outcome[] {
    return this.outcomes.filter((o) => o.started < to && o.ended > from && (kind === undefined || o.kind === kind));
  }

  /** Requests sent at `from` or later. */
  since(from: number, kind?: RequestKind): Outcome[] {
    return this.outcomes.filter((o) => o.started >= from && (kind === undefined || o.kind === kind));
  }

  /** The end of the written time range (exclusive), as an ISO instant. */
  get to(): string {
    return new Date(this.base + (this.seq + 1) * 1000).toISOString();
  }

  /** Every acknowledged value reads back with its value. */
  async assertAcknowledgedStored(): Promise<void> {
    const from = new Date(this.base).toISOString();
    const stored = await this.client.get<{ timestamp: number; value: number }[]>(`${API}/point-values/single/${this.xid}?from=${from}&to=${this.to}&limit=1000000`);
    assert.equal(stored.status, 200, stored.text);
    const byTs = new Map(stored.body.map((v) => [v.timestamp, v.value]));
    const lost = [...this.acknowledged].filter(([ts, value]) => byTs.get(ts) !== value);
    assert.deepEqual(lost.slice(0, 5), [], `${lost.length} of ${this.acknowledged.size} acknowledged values missing or wrong`);
  }

  private async loop(request: () => Promise<unknown>, pauseMs = 50): Promise<void> {
    while (this.running) {
      await request();
      await new Promise((r) => setTimeout(r, pauseMs));
    }
  }

  private async write(): Promise<void> {
    const batch = Array.from({ length: 50 }, () => {
      this.seq++;
      return { xid: this.xid, timestamp: this.base + this.seq * 1000, value: this.seq };
    });
    const outcome = await this.timed('write', () => this.client.post(`${API}/point-values`, batch));
    if (outcome.status === 200) for (const v of batch) this.acknowledged.set(v.timestamp, v.value);
  }

  private async read(): Promise<void> {
    const from = new Date(this.base).toISOString();
    const single = `${API}/point-values/single/${this.xid}?from=${from}&to=${this.to}`;
    await this.timed('rollup', () => this.client.get(`${single}&rollup=AVERAGE&timePeriodType=HOURS`));
    await this.timed('raw', () => this.client.get(`${single}&limit=10`));
    if (this.withMetadataReads) await this.timed('metadata', () => this.client.get(`${API}/data-points?limit(5)`));
  }

  private async timed(kind: RequestKind, request: () => Promise<Response>): Promise<Outcome> {
    const started = Date.now();
    const res = await request();
    const outcome = { kind, status: res.status, started, ended: Date.now(), body: res.text };
    this.outcomes.push(outcome);
    return outcome;
  }
}

/** A 503 in the error body, naming the store that did not answer (never a driver's words). */
export function assertStoreUnavailable(o: Outcome): void {
  const body = JSON.parse(o.body) as { serviceStatusCode: number; message: string };
  assert.equal(body.serviceStatusCode, 5000, o.body);
  assert.match(body.message, /^The (point-value|metadata) store is unavailable; try again shortly$/, o.body);
}

/** What a list of outcomes looked like, for assertion messages: kind status ms, in order. */
export function describeOutcomes(outcomes: readonly Outcome[]): string {
  return outcomes.map((o) => `${o.kind} ${o.status} ${took(o)}ms`).join(', ');
}

/** GET `path` without credentials, timed. */
export async function timedGet(baseUrl: string, path: string): Promise<{ status: number; ms: number }> {
  const started = Date.now();
  const res = await fetch(baseUrl + path);
  await res.text();
  return { status: res.status, ms: Date.now() - started };
}

/** How long requests may take while a store is frozen: a store call by its time-out, /health by its 2 s. */
export interface FreezeLimits {
  storeTimeoutMs: number;
  /** What a request may take beyond the time-out on a busy machine (the store call and the HTTP round trip). */
  marginMs: number;
  healthWithinMs: number;
}

/** Every request during a freeze was answered 200 or a store's 503, each within its limit. */
export function assertAnsweredInTime(during: readonly Outcome[], limits: FreezeLimits): void {
  const summary = describeOutcomes(during);
  for (const o of during) {
    assert.ok(o.status === 200 || o.status === 503, `${o.kind} answered ${o.status} during the freeze: ${o.body.slice(0, 200)}`);
    if (o.status === 503 && o.kind !== 'health') assertStoreUnavailable(o);
    const within = o.kind === 'health' ? limits.healthWithinMs : limits.storeTimeoutMs + limits.marginMs;
    assert.ok(took(o) <= within, `${o.kind} took ${took(o)} ms during the freeze (at most ${within}): ${summary}`);
  }
}

/** For each group of kinds, some request of the group was answered 503 during the freeze. */
export function assertRefused(during: readonly Outcome[], groups: readonly (readonly RequestKind[])[]): void {
  for (const kinds of groups) {
    assert.ok(during.some((o) => kinds.includes(o.kind) && o.status === 503), `no ${kinds.join(' or ')} was answered 503 during the freeze: ${describeOutcomes(during)}`);
  }
}

/** The /health answers 503 during the freeze, parsed; at least one. */
export function degradedAnswers(during: readonly Outcome[]): { outcome: Outcome; body: { status: string; metadata: { ok: boolean }; values: { ok: boolean } } }[] {
  const degraded = during.filter((o) => o.kind === 'health' && o.status === 503);
  assert.ok(degraded.length > 0, `/health never said degraded: ${describeOutcomes(during)}`);
  return degraded.map((outcome) => ({ outcome, body: JSON.parse(outcome.body) as { status: string; metadata: { ok: boolean }; values: { ok: boolean } } }));
}

/** A virtual source and a NUMERIC point for a load to write to and read from. */
export async function loadPoint(admin: ApiClient, xid: string, name: string): Promise<void> {
  const ds = await admin.post(`${API}/data-sources`, { xid: `${xid}-ds`, name, modelType: 'VIRTUAL' });
  assert.equal(ds.status, 201, ds.text);
  const dp = await admin.post(`${API}/data-points`, { xid, name, dataSourceXid: `${xid}-ds`, pointLocator: { dataType: 'NUMERIC', changeType: 'NO_CHANGE' } });
  assert.equal(dp.status, 201, dp.text);
}
