// The event handlers' worker, one on every instance: claims due jobs (each job goes to one instance
// of the cluster; a lease that runs out, its instance dead, is taken over: at least once), runs its
// kind's delivery with a bounded concurrency, records every attempt, and schedules the retries.
// Raising an event only inserts rows; nothing here runs on the event path.
import type { Logger } from 'pino';
import type { ClaimedJob, DeliveryCounts, DeliveryRow } from '../store/metadata/event-handlers.js';
import type { EventRecord } from '../store/metadata/events.js';
import type { DeliveryResult, EventHandlerDefinition, HandlerAction, HandlerKind } from '../services/handler-kinds.js';

/** The jobs table, as the worker uses it (store/metadata/event-handlers.ts HandlerJobsRepository). */
export interface HandlerJobStore {
  claim(instance: string, now: number, leaseMs: number, limit: number): Promise<ClaimedJob[]>;
  nextDue(): Promise<number | undefined>;
  finish(jobId: number, handlerId: number, delivery: DeliveryRow | undefined): Promise<void>;
  retry(jobId: number, handlerId: number, delivery: DeliveryRow, dueTs: number): Promise<void>;
  release(instance: string, jobIds: readonly number[]): Promise<void>;
}

export interface HandlerJobOptions {
  /** Deliveries under way at once on this instance (EVENT_HANDLER_CONCURRENCY). */
  concurrency: number;
  /** How long a claim holds a job; an instance that died mid-delivery loses it after this. */
  leaseMs: number;
  /** How often jobs made elsewhere (and retries) are looked for when nothing wakes the worker. */
  pollMs: number;
  /** First retry after this (EVENT_HANDLER_RETRY_MS), doubling, at most retryMaxMs. */
  retryFirstMs: number;
  retryMaxMs: number;
  /** A job still failing this long after it was made is given up (24 h). */
  giveUpAfterMs: number;
}

export const DEFAULT_JOB_TIMINGS = { leaseMs: 120_000, retryMaxMs: 3_600_000, giveUpAfterMs: 24 * 3_600_000 } as const;

export interface HandlerJobPorts {
  instance: string;
  jobs: HandlerJobStore;
  handler(id: number): Promise<EventHandlerDefinition | undefined>;
  kind(type: string): HandlerKind | undefined;
  /** The event as stored and as the API shows it; undefined when it no longer exists. */
  event(id: number): Promise<{ record: EventRecord; view: Record<string, unknown> } | undefined>;
  log: Pick<Logger, 'warn' | 'debug'>;
  options: HandlerJobOptions;
  /** Counts each recorded delivery by handler type and outcome (metrics). */
  counts?: DeliveryCounts;
}

export class HandlerJobWorker {
  private readonly inFlight = new Map<number, Promise<void>>();
  /** Jobs given back at stop: whatever their delivery answers later is not recorded. */
  private readonly released = new Set<number>();
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;
  private pumping = false;
  private again = false;
  private stopped = true;
  private attemptsRun = 0;

  constructor(private readonly ports: HandlerJobPorts) {}

  start(): void {
    this.stopped = false;
    this.nudge();
  }

  /** Jobs may be due now (an event changed here or elsewhere): claim at once, not at the next poll. */
  nudge(): void {
    if (this.stopped) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = true;
    void this.pump().finally(() => {
      this.pumping = false;
      if (this.again && !this.stopped) {
        this.again = false;
        this.nudge();
      }
    });
  }

  /** Attempts this instance has run since it started (each job's attempt runs on one instance). */
  get attempts(): number {
    return this.attemptsRun;
  }

  /** Deliveries under way on this instance. */
  get busy(): number {
    return this.inFlight.size;
  }

  /** Stops claiming; waits briefly for deliveries under way, then gives the rest back for another claim. */
  async stop(graceMs = 2_000): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.inFlight.size > 0) {
      let grace: NodeJS.Timeout | undefined;
      await Promise.race([Promise.allSettled([...this.inFlight.values()]), new Promise((resolve) => (grace = setTimeout(resolve, graceMs)))]);
      clearTimeout(grace);
    }
    const left = [...this.inFlight.keys()];
    for (const id of left) this.released.add(id);
    await this.ports.jobs.release(this.ports.instance, left).catch((err: unknown) => this.ports.log.warn({ err }, 'giving back event handler jobs failed'));
  }

  private async pump(): Promise<void> {
    const { jobs, options, instance, log } = this.ports;
    try {
      while (!this.stopped) {
        const room = options.concurrency - this.inFlight.size;
        if (room <= 0) return; // a finishing delivery nudges
        const claimed = await jobs.claim(instance, Date.now(), options.leaseMs, room);
        if (this.stopped) {
          await jobs.release(instance, claimed.map((j) => j.id));
          return;
        }
        for (const job of claimed) this.run(job);
        if (claimed.length < room) break;
      }
      if (this.stopped) return;
      const next = await jobs.nextDue();
      this.wakeAt(Math.min(next ?? Infinity, Date.now() + options.pollMs));
    } catch (err) {
      log.warn({ err }, 'claiming event handler jobs failed');
      this.wakeAt(Date.now() + options.pollMs);
    }
  }

  private wakeAt(ts: number): void {
    if (this.stopped) return;
    const at = Math.max(ts, Date.now());
    if (this.timer && this.timerAt <= at) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.timerAt = Infinity;
      this.nudge();
    }, at - Date.now());
    this.timer.unref();
  }

  private run(job: ClaimedJob): void {
    const done = this.attempt(job)
      .catch((err: unknown) => this.ports.log.warn({ err, job: job.id }, 'an event handler job failed'))
      .finally(() => {
        this.inFlight.delete(job.id);
        this.released.delete(job.id);
        this.nudge();
      });
    this.inFlight.set(job.id, done);
  }

  private async attempt(job: ClaimedJob): Promise<void> {
    const { jobs, options } = this.ports;
    const [handler, event] = await Promise.all([this.ports.handler(job.handlerId), this.ports.event(job.eventId)]);
    const action = job.action as HandlerAction;
    // Gone or switched off since the job was made, or an escalation no longer called for: dropped, not recorded.
    if (!handler || handler.disabled || !event) return jobs.finish(job.id, job.handlerId, undefined);
    if (action === 'ESCALATED' && (!event.record.active || event.record.acknowledgedTimestamp !== null)) return jobs.finish(job.id, job.handlerId, undefined);
    const row = (outcome: DeliveryRow['outcome'], r: { status?: number | undefined; error?: string | undefined }): DeliveryRow => {
      this.ports.counts?.add(handler.handlerType, outcome);
      return { eventId: job.eventId, action, attempt: job.attempt, outcome, status: r.status, error: r.error };
    };
    const kind = this.ports.kind(handler.handlerType);
    if (!kind) return jobs.finish(job.id, job.handlerId, row('FAILED', { error: `no ${handler.handlerType} handlers on this instance` }));
    this.attemptsRun++;
    const result = await this.deliver(kind, { handler, action, event: event.record, eventView: event.view, attempt: job.attempt });
    if (this.released.has(job.id)) return; // given back at stop: another claim will try again
    if (result.outcome === 'SENT') return jobs.finish(job.id, job.handlerId, row('SENT', result));
    if (!result.retry) return jobs.finish(job.id, job.handlerId, row('FAILED', result));
    const due = Date.now() + Math.min(options.retryFirstMs * 2 ** (job.attempt - 1), options.retryMaxMs);
    if (due - job.createdTs > options.giveUpAfterMs) return jobs.finish(job.id, job.handlerId, row('GAVE_UP', result));
    await jobs.retry(job.id, job.handlerId, row('FAILED', result), due);
    this.wakeAt(due);
  }

  /** The kind's attempt, bounded by half the lease (a kind has its own, shorter, time-outs). */
  private async deliver(kind: HandlerKind, attempt: Parameters<HandlerKind['deliver']>[0]): Promise<DeliveryResult> {
    let timer: NodeJS.Timeout | undefined;
    const limit = this.ports.options.leaseMs / 2;
    try {
      return await Promise.race([
        kind.deliver(attempt),
        new Promise<DeliveryResult>((resolve) => (timer = setTimeout(() => resolve({ outcome: 'FAILED', error: `no result in ${limit} ms`, retry: true }), limit))),
      ]);
    } catch (err) {
      return { outcome: 'FAILED', error: err instanceof Error ? err.message : String(err), retry: true };
    } finally {
      clearTimeout(timer);
    }
  }
}
