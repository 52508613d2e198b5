// The cluster parts of one instance: the channel to the others and the leases, on the metadata
// server when it is PostgreSQL; alone (nothing shared) on PGlite.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import { localChannel, postgresChannel, type ClusterChannel } from './channel.js';
import { localLeases, postgresLeases, type Leases } from './leases.js';
import { postgresWriterLock, type WriterLock } from './writer-lock.js';

export interface Cluster {
  channel: ClusterChannel;
  leases: Leases;
  /** The writer lock of a shared value store of this name; undefined when alone. */
  writerLock(name: string): WriterLock | undefined;
  close(): Promise<void>;
}

export async function openCluster(config: Pick<Config, 'databaseUrl' | 'databaseSchema' | 'storeTimeoutMs'>, installation: string, log: Logger): Promise<Cluster> {
  const instanceId = randomUUID();
  if (!config.databaseUrl) return { channel: localChannel(instanceId), leases: localLeases(), writerLock: () => undefined, close: async () => undefined };
  const url = config.databaseUrl;
  const channel = await postgresChannel({ url, installation, instanceId, log });
  const leases = await postgresLeases({ url, installation, log }).catch(async (err: unknown) => {
    await channel.close();
    throw err;
  });
  const writerLocks: WriterLock[] = [];
  return {
    channel,
    leases,
    writerLock(name) {
      const lock = postgresWriterLock({ url, ...(config.databaseSchema ? { schema: config.databaseSchema } : {}), installation, instanceId, name, log, timeoutMs: config.storeTimeoutMs });
      writerLocks.push(lock);
      return lock;
    },
    async close() {
      await Promise.all(writerLocks.map((l) => l.close()));
      await leases.close();
      await channel.close();
    },
  };
}
