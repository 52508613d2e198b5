// The metadata database: PostgreSQL dialect, whether embedded (PGlite) or a server (pg).
// Repositories talk to this small surface only; services never see SQL.

export type Row = Record<string, unknown>;

export interface Queryable {
  query<T extends Row = Row>(text: string, values?: readonly unknown[]): Promise<T[]>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(script: string): Promise<void>;
}

export interface MetadataDb extends Queryable {
  readonly engine: 'pglite' | 'postgresql';
  /** Runs fn in one transaction on one connection; rolls back when fn throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** A cheap round trip, for /health. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** PostgreSQL error codes we translate into API errors. */
export const PgErrorCode = {
  UNIQUE_VIOLATION: '23505',
  FOREIGN_KEY_VIOLATION: '23503',
} as const;

export function pgErrorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'string' ? code : undefined;
}
