// Waiting in tests on a busy 2-core machine: poll for a condition with a generous deadline rather
// than sleep a fixed time; and a free local port (TCP or UDP) for servers a test starts.
import { createSocket } from 'node:dgram';
import { createServer } from 'node:net';

/** Polls `probe` until it returns something other than undefined, and returns that. */
export async function eventually<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 15_000, intervalMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const result = await probe();
    if (result !== undefined) return result;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Polls the synchronous `check` until it holds. */
export async function waitFor(what: string, check: () => boolean, timeoutMs = 10_000, intervalMs = 10): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** A port nothing listens on right now (the OS picks it). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** A UDP port nothing is bound to right now (the OS picks it). */
export async function freeUdpPort(): Promise<number> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '0.0.0.0', resolve));
  const { port } = socket.address();
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}

/**
 * Counts turns of the event loop (setImmediate callbacks) until stopped: how often other work got to
 * run while something long was going on.
 */
export function turnCounter(): { stop(): number } {
  let turns = 0;
  let running = true;
  const turn = () => {
    turns++;
    if (running) setImmediate(turn);
  };
  setImmediate(turn);
  return {
    stop() {
      running = false;
      return turns;
    },
  };
}
