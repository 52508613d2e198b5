// /websocket/events: pushes every raise, acknowledgement, return to normal and comment (COMMENT_ADDED,
// with the comment beside the event, which carries all of them) of the events the socket's user may read. One EventService listener for the whole server (only while a socket is
// open); each event is serialised once, and read permission is decided once per user, not per socket.
// The socket takes no messages: what a client sends is ignored (Mango clients send filters).
import type { Logger } from 'pino';
import { commentView, eventView, type EventAction, type EventComment, type EventRecord, type EventService } from '../services/events.js';
import type { UserRecord } from '../store/metadata/users.js';
import type { Channel } from './websocket-channel.js';
import type { Connection } from './websocket-connection.js';

// Events wait here while permissions are checked; a backlog this long means the store is stuck.
const MAX_QUEUED_EVENTS = 10_000;

interface QueuedEvent {
  action: EventAction;
  event: EventRecord;
  comment: EventComment | undefined;
}

export class EventChannel implements Channel {
  private readonly sockets = new Set<Connection>();
  private readonly queue: QueuedEvent[] = [];
  private draining = false;
  private off: (() => void) | undefined;

  constructor(
    private readonly events: EventService,
    private readonly log: Logger,
  ) {}

  open(conn: Connection): void {
    this.sockets.add(conn);
    this.off ??= this.events.subscribe((action, event, _local, comment) => this.enqueue({ action, event, comment }));
    conn.onRelease(() => {
      this.sockets.delete(conn);
      if (this.sockets.size > 0) return;
      this.off?.();
      this.off = undefined;
    });
  }

  close(): void {
    this.off?.();
    this.off = undefined;
    this.queue.length = 0;
  }

  private enqueue(item: QueuedEvent): void {
    if (this.queue.length >= MAX_QUEUED_EVENTS) {
      this.queue.shift();
      this.log.warn('websocket: event backlog full, dropping the oldest event');
    }
    this.queue.push(item);
    if (!this.draining) void this.drain();
  }

  /** One event at a time, so each socket sees an event's actions in the order they happened. */
  private async drain(): Promise<void> {
    this.draining = true;
    try {
      for (let item = this.queue.shift(); item; item = this.queue.shift()) {
        await this.deliver(item).catch((err: unknown) => this.log.warn({ err, eventId: item?.event.id }, 'websocket: event delivery failed'));
      }
    } finally {
      this.draining = false;
    }
  }

  private async deliver({ action, event, comment }: QueuedEvent): Promise<void> {
    const byUser = new Map<number, { user: UserRecord; sockets: Connection[] }>();
    for (const conn of this.sockets) {
      const entry = byUser.get(conn.auth.user.id) ?? { user: conn.auth.user, sockets: [] };
      entry.sockets.push(conn);
      byUser.set(conn.auth.user.id, entry);
    }
    let text: Buffer | undefined;
    await Promise.all(
      [...byUser.values()].map(async ({ user, sockets }) => {
        if (!(await this.events.mayRead(user, event))) return;
        text ??= Buffer.from(JSON.stringify({ status: 'OK', payload: { action, event: eventView(event), ...(comment ? { comment: commentView(comment) } : {}) } }));
        for (const conn of sockets) conn.send(text);
      }),
    );
  }
}
