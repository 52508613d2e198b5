// The instances of an installation that run now, and the rule for running several: they must share
// the value store. An instance whose point values are embedded (DuckDB under its DATA_DIR) keeps a
// history no other instance sees, so behind a proxy the history would alternate between instances;
// it refuses to start beside another instance, and any instance refuses to start beside it.
//
// Each running instance has a row in `cluster_instances` and holds a session advisory lock keyed by
// the row's id on a dedicated connection. The server frees the lock when the instance's connection
// ends (a crash included), so a row whose lock can be taken belongs to an instance that is gone:
// nothing that died blocks a restart. Instances join one at a time (a transaction-level advisory
// lock), so two starting together cannot both miss each other.
import pg from 'pg';
import type { Logger } from 'pino';
import { ConfigError, type Config } from '../../config.js';

/** What an instance is, as the others see it. */
export interface InstanceMember {
  name: string;
  /** Where its point values live: `duckdb` (embedded), `postgres`, `questdb:<table>`. */
  valueStore: string;
  /** Epoch ms. */
  started: number;
}

export interface Presence {
  readonly name: string;
  close(): Promise<void>;
}

/** The value store as compared between instances: equal strings name the same history. */
export function valueStoreOf(values: Pick<Config['values'], 'engine' | 'questdbTable'>): string {
  return values.engine === 'questdb' ? `questdb:${values.questdbTable}` : values.engine;
}

const EMBEDDED = 'duckdb';
const SHARE = 'instances sharing DATABASE_URL must share the value store';

/** "VALUE_STORE=questdb, QUESTDB_TABLE=t": the settings that name a value store. */
function settingsOf(valueStore: string): string {
  const [engine, table] = valueStore.split(':');
  return `VALUE_STORE=${engine}${table ? `, QUESTDB_TABLE=${table}` : ''}`;
}

/**
 * Why `joining` may not run beside the instances `running`, as a configuration error naming the
 * setting to change; undefined when it may.
 */
export function refusal(joining: Pick<InstanceMember, 'name' | 'valueStore'>, running: readonly InstanceMember[]): ConfigError | undefined {
  const namesake = running.find((m) => m.name === joining.name);
  if (namesake) {
    return new ConfigError(
      `INSTANCE_NAME: an instance named ${joining.name} runs already in this installation (since ${new Date(namesake.started).toISOString()}): ` +
        'give each instance a name of its own',
    );
  }
  const first = running[0];
  if (first && joining.valueStore === EMBEDDED) {
    return new ConfigError(
      `VALUE_STORE: this instance keeps its point values embedded (VALUE_STORE=duckdb, under DATA_DIR), but instance ${first.name} ` +
        `(${settingsOf(first.valueStore)}) runs on this metadata server: ${SHARE}; set VALUE_STORE=postgres (or QuestDB) on every instance, or run one instance only`,
    );
  }
  const embedded = running.find((m) => m.valueStore === EMBEDDED);
  if (embedded) {
    return new ConfigError(
      `VALUE_STORE: instance ${embedded.name} keeps its point values embedded (VALUE_STORE=duckdb, under its DATA_DIR) and runs on this ` +
        `metadata server: ${SHARE}; stop it, or run every instance with VALUE_STORE=postgres (or QuestDB)`,
    );
  }
  const elsewhere = running.find((m) => m.valueStore !== joining.valueStore);
  if (elsewhere) {
    return new ConfigError(
      `VALUE_STORE: instance ${elsewhere.name} (${settingsOf(elsewhere.valueStore)}) runs on this metadata server, and this instance ` +
        `(${settingsOf(joining.valueStore)}) would keep its point values elsewhere: ${SHARE}`,
    );
  }
  return undefined;
}

/** Alone (PGlite): nobody else can run on this metadata store. */
export function localPresence(name: string): Presence {
  return { name, close: async () => undefined };
}

export interface PostgresPresenceOptions {
  url: string;
  schema?: string;
  installation: string;
  name: string;
  valueStore: string;
  log: Logger;
}

const REJOIN_MS = 1_000;
/** A server that does not answer within this is not waited for (a start fails, a rejoin tries again). */
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * Joins the installation's running instances, or refuses (ConfigError, exit code 2) when this
 * instance may not run beside them. Holds its place until close(); a lost connection loses it, and
 * the instance joins again when the server is back (logging an error if it may no longer run).
 */
export async function postgresPresence(o: PostgresPresenceOptions): Promise<Presence> {
  const space = `${o.installation}:instances`;
  let client: pg.Client | undefined;
  let closed = false;
  let rejoin: NodeJS.Timeout | undefined;
  let refusedBefore = false;
  let rowId: number | undefined;

  const join = async (): Promise<void> => {
    const c = new pg.Client({
      connectionString: o.url,
      application_name: `device-data-service instance ${process.pid}`,
      keepAlive: true,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      ...(o.schema ? { options: `-c search_path=${o.schema}` } : {}),
    });
    c.on('error', (err) => o.log.warn({ err }, 'instance presence: connection lost'));
    c.on('end', () => {
      if (client !== c) return;
      client = undefined;
      scheduleRejoin();
    });
    await c.connect();
    try {
      await register(c);
    } catch (err) {
      await c.end().catch(() => undefined);
      throw err;
    }
    // Closed while joining again: leave at once.
    if (closed) await c.end().catch(() => undefined);
    else client = c;
  };

  const register = async (c: pg.Client): Promise<void> => {
    await c.query('begin');
    try {
      // One instance joins at a time (released at commit): two starting together see each other.
      await c.query("select pg_advisory_xact_lock(hashtext($1 || ':join'), 0)", [space]);
      // A row whose lock this session can take belongs to an instance that is gone.
      const { rows } = await c.query<{ id: number; name: string; value_store: string; started: string; gone: boolean }>(
        'select id, name, value_store, started, pg_try_advisory_lock(hashtext($1), id) as gone from cluster_instances order by id',
        [space],
      );
      const gone = rows.filter((r) => r.gone).map((r) => r.id);
      if (gone.length > 0) {
        await c.query('select pg_advisory_unlock(hashtext($1), id) from unnest($2::integer[]) as id', [space, gone]);
        await c.query('delete from cluster_instances where id = any($1::integer[])', [gone]);
      }
      const running = rows.filter((r) => !r.gone).map((r) => ({ name: r.name, valueStore: r.value_store, started: Number(r.started) }));
      const refused = refusal({ name: o.name, valueStore: o.valueStore }, running);
      if (refused) throw refused;
      const inserted = await c.query<{ id: number }>(
        'insert into cluster_instances (name, value_store, started) values ($1, $2, $3) returning id',
        [o.name, o.valueStore, Date.now()],
      );
      const id = inserted.rows[0]!.id;
      await c.query('select pg_advisory_lock(hashtext($1), $2)', [space, id]);
      await c.query('commit');
      rowId = id;
      if (running.length > 0) o.log.info({ instance: o.name, others: running.map((m) => m.name) }, 'instance joined the installation');
    } catch (err) {
      await c.query('rollback').catch(() => undefined);
      throw err;
    }
  };

  const scheduleRejoin = () => {
    if (closed || rejoin) return;
    rejoin = setTimeout(() => {
      rejoin = undefined;
      if (closed) return;
      join().then(
        () => {
          if (refusedBefore) o.log.info({ instance: o.name }, 'instance presence: joined the installation again');
          refusedBefore = false;
        },
        (err: unknown) => {
          // Another instance started while this one was away, and the two may not run together.
          if (err instanceof ConfigError) {
            if (!refusedBefore) o.log.error({ instance: o.name }, `instance presence lost, and this instance may no longer run: ${err.message}`);
            refusedBefore = true;
          } else {
            o.log.warn({ err }, 'instance presence: joining again failed');
          }
          scheduleRejoin();
        },
      );
    }, REJOIN_MS);
    rejoin.unref();
  };

  await join();
  return {
    name: o.name,
    async close() {
      closed = true;
      if (rejoin) clearTimeout(rejoin);
      const c = client;
      client = undefined;
      // Ending the connection frees the lock (a row left behind goes when the next instance joins).
      if (c && rowId !== undefined) await c.query('delete from cluster_instances where id = $1', [rowId]).catch(() => undefined);
      await c?.end().catch(() => undefined);
    },
  };
}
