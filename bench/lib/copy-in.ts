// PostgreSQL COPY … FROM STDIN for the benches' baselines (historian, line-protocol).
import { once } from 'node:events';
import type pg from 'pg';

/** COPY … FROM STDIN through pg's extension point for custom queries (pg ships no COPY helper). */
export class CopyIn implements pg.Submittable {
  private settle!: { resolve: (rows: number) => void; reject: (err: unknown) => void };
  readonly done = new Promise<number>((resolve, reject) => (this.settle = { resolve, reject }));
  private rows = 0;
  private failed = false;

  constructor(
    private readonly sql: string,
    private readonly chunks: () => Iterable<Buffer>,
  ) {}

  submit(connection: pg.Connection): void {
    (connection as unknown as { query(text: string): void }).query(this.sql);
  }

  handleCopyInResponse(connection: pg.Connection): void {
    const conn = connection as unknown as { sendCopyFromChunk(b: Buffer): void; endCopyFrom(): void; stream: NodeJS.WritableStream & { writableNeedDrain: boolean } };
    void (async () => {
      for (const chunk of this.chunks()) {
        if (this.failed) return;
        conn.sendCopyFromChunk(chunk);
        if (conn.stream.writableNeedDrain) await once(conn.stream, 'drain');
      }
      conn.endCopyFrom();
    })().catch((err: unknown) => this.handleError(err));
  }

  handleCommandComplete(msg: { text?: string }): void {
    this.rows = Number(/^COPY (\d+)/.exec(msg.text ?? '')?.[1] ?? 0);
  }

  handleReadyForQuery(): void {
    if (!this.failed) this.settle.resolve(this.rows);
  }

  handleError(err: unknown): void {
    this.failed = true;
    this.settle.reject(err);
  }

  handleRowDescription(): void {}
  handleDataRow(): void {}
  handleEmptyQuery(): void {}
  handlePortalSuspended(): void {}
  handleCopyData(): void {}
}
