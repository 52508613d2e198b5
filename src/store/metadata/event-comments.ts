// Comments on events: written here; read with their event, as one aggregate per event row
// (EVENT_COMMENTS in events.ts), so a list of events costs no query per event.
import type { Queryable, Row } from './db.js';

/** A comment as stored; `id` orders an event's comments (oldest first) and is not shown by the API. */
export interface EventComment {
  id: number;
  username: string;
  /** Epoch ms. */
  timestamp: number;
  text: string;
}

export interface NewEventComment {
  userId: number;
  username: string;
  timestamp: number;
  text: string;
}

/**
 * The comments of the event row aliased `t`, oldest first, as a JSON array ('[]' when none): the
 * read expression of `comments` in every event read and RETURNING (store/metadata/events.ts).
 */
export const EVENT_COMMENTS = `coalesce((select json_agg(json_build_object('id', c.id, 'username', c.username, 'timestamp', c.ts, 'text', c.text) order by c.id)
  from event_comments c where c.event_id = t.id), '[]'::json)`;

export class EventCommentsRepository {
  constructor(private readonly db: Queryable) {}

  /** Adds a comment to an event that exists (the caller found it); returns it as stored. */
  async add(eventId: number, comment: NewEventComment): Promise<EventComment> {
    const rows = await this.db.query<EventComment & Row>(
      `insert into event_comments (event_id, user_id, username, ts, text) values ($1, $2, $3, $4, $5)
       returning id, username, ts as "timestamp", text`,
      [eventId, comment.userId, comment.username, comment.timestamp, comment.text],
    );
    return rows[0]!;
  }
}
