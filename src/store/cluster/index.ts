export { RESYNC, type ClusterChannel, type ClusterHandler } from './channel.js';
export type { LeaseKind, Leases } from './leases.js';
export { openCluster, type Cluster } from './open.js';
export type { Presence } from './instances.js';
export type { WriterLock, WriterTurn } from './writer-lock.js';
