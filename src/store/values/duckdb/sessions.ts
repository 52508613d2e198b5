// DuckDB connections as the store uses them: a Session keeps a connection's prepared statements and
// appenders across calls; a Pool lends sessions to one caller at a time.
import {
  DuckDBTypeId,
  type DuckDBAppender,
  type DuckDBConnection,
  type DuckDBMaterializedResult,
  type DuckDBPreparedStatement,
  type DuckDBResultReader,
} from '@duckdb/node-api';

/** A connection with its prepared statements and appenders; used by one caller at a time. */
export class Session {
  private readonly statements = new Map<string, DuckDBPreparedStatement>();
  private readonly appenders = new Map<string, DuckDBAppender>();
  constructor(readonly conn: DuckDBConnection) {}

  /** Runs a cached prepared statement with numeric parameters bound as the types DuckDB inferred. */
  async query(sql: string, params: readonly number[] = []): Promise<DuckDBResultReader> {
    return (await this.prepared(sql, params)).runAndReadAll();
  }

  /** As query(), materialized, for reading its chunks' vectors directly. */
  async run(sql: string, params: readonly number[] = []): Promise<DuckDBMaterializedResult> {
    return (await this.prepared(sql, params)).run();
  }

  /** Statement text without parameters (DDL). */
  async exec(sql: string): Promise<void> {
    await this.conn.run(sql);
  }

  /** The appender for a main table, kept across transactions (each transaction flushes it). */
  async appender(table: 'point_values' | 'point_buckets'): Promise<DuckDBAppender> {
    let a = this.appenders.get(table);
    if (!a) {
      a = await this.conn.createAppender(table);
      this.appenders.set(table, a);
    }
    return a;
  }

  /** Drops the appenders with whatever they hold: after a failed transaction, and after DDL. */
  dropAppenders(): void {
    for (const a of this.appenders.values()) {
      try {
        a.clear();
        a.closeSync();
      } catch {
        // a broken appender holds nothing worth keeping
      }
    }
    this.appenders.clear();
  }

  /** Prepared statements and appenders name tables; after DDL they are made again. */
  forget(): void {
    this.dropAppenders();
    for (const st of this.statements.values()) st.destroySync();
    this.statements.clear();
  }

  close(): void {
    this.forget();
    this.conn.closeSync();
  }

  private async prepared(sql: string, params: readonly number[]): Promise<DuckDBPreparedStatement> {
    let st = this.statements.get(sql);
    if (!st) {
      st = await this.conn.prepare(sql);
      this.statements.set(sql, st);
    }
    for (let i = 0; i < params.length; i++) bindNumber(st, i + 1, params[i]!);
    return st;
  }
}

function bindNumber(st: DuckDBPreparedStatement, index: number, value: number): void {
  switch (st.parameterTypeId(index)) {
    case DuckDBTypeId.INTEGER:
      st.bindInteger(index, value);
      return;
    case DuckDBTypeId.BIGINT:
      st.bindBigInt(index, BigInt(value));
      return;
    default:
      st.bindDouble(index, value);
  }
}

/** Connections, each lent to one caller at a time. */
export class Pool {
  private readonly free: Session[];
  private readonly waiting: ((s: Session) => void)[] = [];
  private active = 0;
  private idle: (() => void) | undefined;

  constructor(private readonly sessions: Session[]) {
    this.free = [...sessions];
  }

  async use<T>(fn: (s: Session) => Promise<T>): Promise<T> {
    const s = this.free.pop() ?? (await new Promise<Session>((resolve) => this.waiting.push(resolve)));
    this.active++;
    try {
      return await fn(s);
    } finally {
      this.active--;
      const next = this.waiting.shift();
      if (next) next(s);
      else this.free.push(s);
      if (this.active === 0) this.idle?.();
    }
  }

  /** Every connection's statements and appenders; only while none is lent (the write queue ensures it for writers). */
  forget(): void {
    for (const s of this.sessions) s.forget();
  }

  /** Waits for the queries in flight, then closes every connection. */
  async close(): Promise<void> {
    if (this.active > 0) await new Promise<void>((resolve) => (this.idle = resolve));
    for (const s of this.sessions) s.close();
  }
}
