// What a value store is given by its owner: a logger, and a hook told of every durable append (the
// owner counts written values with it rather than wrapping append).
import pino, { type Logger } from 'pino';

export interface ValueStoreHooks {
  /** Where the engine logs, through a child `{ engine }`; silent when absent. */
  log?: Logger;
  /**
   * Called once per append of a non-empty batch, with its value count, once its values are durable
   * and visible to reads (before the append resolves); never for an append that fails.
   */
  onAppended?: (values: number) => void;
}

/** The engine's logger: a child of the owner's, or a silent one. */
export function engineLogger(log: Logger | undefined, engine: 'duckdb' | 'questdb' | 'postgres'): Logger {
  return (log ?? pino({ level: 'silent' })).child({ engine });
}

/** onAppended (or nothing) guarded so that a throwing hook cannot break the write path: it is logged. */
export function appendedHook(onAppended: ValueStoreHooks['onAppended'], log: Logger): (values: number) => void {
  if (!onAppended) return () => undefined;
  return (values) => {
    try {
      onAppended(values);
    } catch (err) {
      log.error({ err }, 'onAppended hook failed');
    }
  };
}
