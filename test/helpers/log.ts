// A pino logger whose lines the test can read (the request log, warnings), parsed.
import { Writable } from 'node:stream';
import pino from 'pino';

export type LogLine = Record<string, unknown>;

export function capturingLogger(level: pino.LevelWithSilent = 'debug'): { log: pino.Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line) as LogLine);
      done();
    },
  });
  return { log: pino({ level }, sink), lines };
}

/** Lets pino's stream write. */
export const flushed = () => new Promise((resolve) => setImmediate(resolve));
