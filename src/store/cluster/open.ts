// The cluster parts of one instance: the channel to the others and the leases, on the metadata
// server when it is PostgreSQL; alone (nothing shared) on PGlite.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import { localChannel, postgresChannel, type ClusterChannel } from './channel.js';
import { localLeases, postgresLeases, type Leases } from './leases.js';

export interface Cluster {
  channel: ClusterChannel;
  leases: Leases;
  close(): Promise<void>;
}

export async function openCluster(config: Pick<Config, 'databaseUrl'>, installation: string, log: Logger): Promise<Cluster> {
  const instanceId = randomUUID();
  if (!config.databaseUrl) return { channel: localChannel(instanceId), leases: localLeases(), close: async () => undefined };
  const channel = await postgresChannel({ url: config.databaseUrl, installation, instanceId, log });
  const leases = await postgresLeases({ url: config.databaseUrl, installation, log }).catch(async (err: unknown) => {
    await channel.close();
    throw err;
  });
  return {
    channel,
    leases,
    async close() {
      await leases.close();
      await channel.close();
    },
  };
}
