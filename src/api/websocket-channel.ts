// What each WebSocket endpoint implements, and the error message every endpoint sends.
import type { Connection } from './websocket-connection.js';

export interface Channel {
  /** Starts serving a socket that passed the handshake; the channel forgets it on conn.onRelease. */
  open(conn: Connection): void;
  /** Stops listening to the services (the hub has closed every socket). */
  close(): void;
}

export type ErrorType = 'NOT_FOUND' | 'PERMISSION_DENIED' | 'SERVER_ERROR';

export function errorMessage(type: ErrorType, message: string): string {
  return JSON.stringify({ status: 'ERROR', payload: { type, message } });
}
