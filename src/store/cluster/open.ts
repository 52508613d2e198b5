// The cluster parts of one instance: its place among the installation's instances, the channel to
// the others and the leases, on the metadata server when it is PostgreSQL; alone (nothing shared) on
// PGlite.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import { localChannel, postgresChannel, type ClusterChannel } from './channel.js';
import { localPresence, postgresPresence, valueStoreOf, type Presence } from './instances.js';
import { localLeases, postgresLeases, type Leases } from './leases.js';
import { postgresWriterLock, type WriterLock } from './writer-lock.js';

export interface Cluster {
  /** This instance among the installation's running instances (INSTANCE_NAME). */
  presence: Presence;
  channel: ClusterChannel;
  leases: Leases;
  /** The writer lock of a shared value store of this name; undefined when alone. */
  writerLock(name: string): WriterLock | undefined;
  close(): Promise<void>;
}

/**
 * Refuses (ConfigError) an instance that may not run beside the installation's running ones
 * (instances.ts) before anything else is opened.
 */
export async function openCluster(
  config: Pick<Config, 'databaseUrl' | 'databaseSchema' | 'instanceName' | 'values' | 'storeTimeoutMs'>,
  installation: string,
  log: Logger,
): Promise<Cluster> {
  const instanceId = randomUUID();
  const name = config.instanceName;
  if (!config.databaseUrl) {
    return { presence: localPresence(name), channel: localChannel(instanceId), leases: localLeases(), writerLock: () => undefined, close: async () => undefined };
  }
  const url = config.databaseUrl;
  const schema = config.databaseSchema ? { schema: config.databaseSchema } : {};
  const presence = await postgresPresence({ url, ...schema, installation, name, valueStore: valueStoreOf(config.values), log });
  const channel = await postgresChannel({ url, installation, instanceId, log }).catch(async (err: unknown) => {
    await presence.close();
    throw err;
  });
  const leases = await postgresLeases({ url, installation, log }).catch(async (err: unknown) => {
    await channel.close();
    await presence.close();
    throw err;
  });
  const writerLocks: WriterLock[] = [];
  return {
    presence,
    channel,
    leases,
    writerLock(store) {
      const lock = postgresWriterLock({ url, ...schema, installation, instanceId, name: store, log, timeoutMs: config.storeTimeoutMs });
      writerLocks.push(lock);
      return lock;
    },
    async close() {
      await Promise.all(writerLocks.map((l) => l.close()));
      await leases.close();
      await channel.close();
      // Last: the value store is closed, so an instance refused beside this one may start now.
      await presence.close();
    },
  };
}
