// Acknowledges many alarms at once. Without a comment: POST /events/acknowledge?in(id,…), one request
// per 100 ids (the bulk form selects by RQL only and takes no body). With a comment: PUT
// /events/acknowledge/<id> {"comment"} for each, a few at a time, since only that form stores a
// comment; each answer is the alarm's new state (comments included) for the list at once, and one
// refusal does not stop the others.
import { describeError } from './dom.js';
import { post, put, type AlarmEvent } from './api.js';

/** Requests in flight with a comment: fast for 100 alarms, well under the per-user rate limit. */
const CONCURRENCY = 6;
/** Ids per bulk request: keeps the query string short. */
const IDS_PER_REQUEST = 100;

export interface AcknowledgeOutcome {
  /** How many the service acknowledged or commented (already acknowledged ones count only with a comment). */
  done: number;
  failed: { id: number; message: string }[];
}

export interface AcknowledgeProgress {
  /** An alarm's new state (with a comment only: the bulk form answers with a count). */
  acknowledged(event: AlarmEvent): void;
  /** How many of the ids have an answer so far. */
  progress(answered: number): void;
}

export async function acknowledgeAlarms(ids: readonly number[], comment: string, on: AcknowledgeProgress): Promise<AcknowledgeOutcome> {
  return comment.trim() === '' ? acknowledgeInBulk(ids, on) : acknowledgeEachWithComment(ids, comment, on);
}

async function acknowledgeInBulk(ids: readonly number[], on: AcknowledgeProgress): Promise<AcknowledgeOutcome> {
  const outcome: AcknowledgeOutcome = { done: 0, failed: [] };
  for (let i = 0; i < ids.length; i += IDS_PER_REQUEST) {
    const chunk = ids.slice(i, i + IDS_PER_REQUEST);
    try {
      const { count } = await post<{ count: number }>(`/events/acknowledge?in(id,${chunk.join(',')})`);
      outcome.done += count;
    } catch (err) {
      const message = describeError(err);
      for (const id of chunk) outcome.failed.push({ id, message });
    }
    on.progress(i + chunk.length);
  }
  return outcome;
}

async function acknowledgeEachWithComment(ids: readonly number[], comment: string, on: AcknowledgeProgress): Promise<AcknowledgeOutcome> {
  const outcome: AcknowledgeOutcome = { done: 0, failed: [] };
  let next = 0;
  let answered = 0;
  async function worker(): Promise<void> {
    while (next < ids.length) {
      const id = ids[next++]!;
      try {
        on.acknowledged(await put<AlarmEvent>(`/events/acknowledge/${id}`, { comment }));
        outcome.done++;
      } catch (err) {
        outcome.failed.push({ id, message: describeError(err) });
      }
      on.progress(++answered);
    }
  }
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, ids.length) }, worker));
  return outcome;
}
