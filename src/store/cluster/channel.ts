// The cluster channel: what one instance tells the others (live values, events, caches to forget),
// over PostgreSQL LISTEN/NOTIFY on the metadata server. Instances of one installation share a channel
// named after its id, so installations (and test schemas) on one server never hear each other.
//
// Messages are batched: many small ones go in one NOTIFY payload, which PostgreSQL limits to 8,000
// bytes. A payload is `<sender id>\n<topic>\t<body>\n<topic>\t<body>...`; bodies are JSON (one line).
// Delivery is at most once: while the listening connection is lost nothing arrives, so every
// subscriber of `resync` hears when it is back and must drop what it may have missed.
import pg from 'pg';
import type { Logger } from 'pino';

export type ClusterHandler = (body: string, from: string) => void;

export interface ClusterChannel {
  /** This instance's id, random per start. */
  readonly instanceId: string;
  /** Whether other instances can exist (a PostgreSQL metadata server); false for PGlite. */
  readonly shared: boolean;
  /** Queues a message for the other instances; sent within a few milliseconds, never throws. */
  tell(topic: string, body: string): void;
  /** Messages of `topic` from other instances; returns the function that unsubscribes. */
  subscribe(topic: string, handler: ClusterHandler): () => void;
  close(): Promise<void>;
}

/** The topic every instance hears after its listening connection came back (messages may be lost). */
export const RESYNC = 'resync';

/** PostgreSQL refuses NOTIFY payloads of 8,000 bytes or more; room is kept for the sender line. */
const MAX_PAYLOAD_BYTES = 7_900;
/** Messages told within this are sent together. */
const FLUSH_DELAY_MS = 5;
const RECONNECT_MS = 1_000;

class Subscribers {
  private readonly byTopic = new Map<string, Set<ClusterHandler>>();

  add(topic: string, handler: ClusterHandler): () => void {
    let set = this.byTopic.get(topic);
    if (!set) this.byTopic.set(topic, (set = new Set()));
    set.add(handler);
    return () => set.delete(handler);
  }

  deliver(topic: string, body: string, from: string, log: Logger): void {
    for (const handler of this.byTopic.get(topic) ?? []) {
      try {
        handler(body, from);
      } catch (err) {
        log.warn({ err, topic }, 'cluster message handler failed');
      }
    }
  }
}

/** One instance alone (PGlite): nothing to tell anybody. */
export function localChannel(instanceId: string): ClusterChannel {
  return {
    instanceId,
    shared: false,
    tell: () => undefined,
    subscribe: () => () => undefined,
    close: async () => undefined,
  };
}

export interface PostgresChannelOptions {
  url: string;
  /** The installation id: instances sharing it share the channel. */
  installation: string;
  instanceId: string;
  log: Logger;
}

/** Splits queued messages into payloads under the NOTIFY limit; a message too long alone is dropped and logged. */
export function packPayloads(sender: string, messages: readonly string[], log?: Logger): string[] {
  const payloads: string[] = [];
  let current = sender;
  let bytes = Buffer.byteLength(sender);
  for (const m of messages) {
    const size = Buffer.byteLength(m) + 1;
    if (Buffer.byteLength(sender) + size > MAX_PAYLOAD_BYTES) {
      log?.warn({ bytes: size }, 'cluster message too long for NOTIFY: dropped');
      continue;
    }
    if (bytes + size > MAX_PAYLOAD_BYTES) {
      payloads.push(current);
      current = sender;
      bytes = Buffer.byteLength(sender);
    }
    current += '\n' + m;
    bytes += size;
  }
  if (current !== sender) payloads.push(current);
  return payloads;
}

/** The channel name for an installation: a plain identifier, so LISTEN needs no quoting. */
export function channelName(installation: string): string {
  return `dds_${installation.replace(/[^0-9a-zA-Z]/g, '').toLowerCase().slice(0, 40)}`;
}

export async function postgresChannel(o: PostgresChannelOptions): Promise<ClusterChannel> {
  const channel = channelName(o.installation);
  const subscribers = new Subscribers();
  let queue: string[] = [];
  let timer: NodeJS.Timeout | undefined;
  let client: pg.Client | undefined;
  let sending: Promise<void> = Promise.resolve();
  let closed = false;
  let reconnect: NodeJS.Timeout | undefined;

  const onNotification = (n: pg.Notification) => {
    if (n.channel !== channel || !n.payload) return;
    const lines = n.payload.split('\n');
    const from = lines[0]!;
    if (from === o.instanceId) return;
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i]!;
      const tab = line.indexOf('\t');
      if (tab > 0) subscribers.deliver(line.slice(0, tab), line.slice(tab + 1), from, o.log);
    }
  };

  const connect = async (): Promise<void> => {
    const c = new pg.Client({ connectionString: o.url, application_name: 'device-data-service cluster', keepAlive: true });
    c.on('notification', onNotification);
    // A lost connection is noticed here; messages sent meanwhile are lost, so subscribers resync.
    c.on('error', (err) => o.log.warn({ err }, 'cluster channel: connection lost'));
    c.on('end', () => {
      if (client === c) client = undefined;
      if (!closed) scheduleReconnect();
    });
    await c.connect();
    await c.query(`LISTEN ${channel}`);
    client = c;
  };

  const scheduleReconnect = () => {
    if (reconnect || closed) return;
    reconnect = setTimeout(() => {
      reconnect = undefined;
      connect().then(
        () => {
          o.log.info('cluster channel: listening again');
          subscribers.deliver(RESYNC, '', o.instanceId, o.log);
        },
        (err: unknown) => {
          o.log.warn({ err }, 'cluster channel: reconnect failed');
          scheduleReconnect();
        },
      );
    }, RECONNECT_MS);
    reconnect.unref();
  };

  const flush = () => {
    timer = undefined;
    const messages = queue;
    queue = [];
    const c = client;
    if (!c) return; // no connection: the others resync when it is back, and so do we
    // One connection sends everything, in order.
    sending = sending.then(async () => {
      for (const payload of packPayloads(o.instanceId, messages, o.log)) {
        try {
          await c.query('SELECT pg_notify($1, $2)', [channel, payload]);
        } catch (err) {
          o.log.warn({ err }, 'cluster channel: a notification was not sent');
          return;
        }
      }
    });
  };

  await connect();
  return {
    instanceId: o.instanceId,
    shared: true,
    tell(topic, body) {
      if (closed) return;
      queue.push(`${topic}\t${body}`);
      timer ??= setTimeout(flush, FLUSH_DELAY_MS);
    },
    subscribe: (topic, handler) => subscribers.add(topic, handler),
    async close() {
      if (closed) return;
      if (timer) {
        clearTimeout(timer);
        flush();
      }
      closed = true;
      if (reconnect) clearTimeout(reconnect);
      await sending;
      await client?.end().catch(() => undefined);
    },
  };
}
