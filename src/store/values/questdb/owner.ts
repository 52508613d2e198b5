// Which installation a QuestDB table belongs to. Point values are keyed by data point id, and ids are
// only meaningful in the metadata store that gave them out: a second installation writing the same
// table would mix two histories under one point. So `<table>_owner` records the installation id of the
// metadata store that first opened the table, and every other installation refuses to open it.
//
// The owner table is a non-WAL table (BYPASS WAL): an INSERT over PG-wire is visible to the next
// SELECT, with no apply to wait for. Two installations claiming at once both insert; the earliest claim
// wins, and each reads the earliest back after its own insert, so both agree on one owner.
import { ConfigError } from '../../../config.js';
import { validateTableName } from './config.js';

/** An installation id: the UUID the metadata store keeps (compose.ts). */
const INSTALLATION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export type Query = <T extends object>(text: string) => Promise<T[]>;

export function ownerTable(table: string): string {
  return validateTableName(`${table}_owner`);
}

interface ClaimRow {
  owner: string;
}

/** The earliest claim on `table`, if any. */
async function earliestClaim(query: Query, owners: string): Promise<string | undefined> {
  const rows = await query<ClaimRow>(`SELECT owner FROM ${owners} ORDER BY claimed LIMIT 1`);
  return rows[0]?.owner;
}

async function tableExists(query: Query, table: string): Promise<boolean> {
  const rows = await query<{ table_name: string }>(`SELECT table_name FROM tables() WHERE table_name = '${validateTableName(table)}'`);
  return rows.length > 0;
}

/**
 * Claims `table` for `installation`, or refuses (ConfigError, exit 2) when it belongs to another one,
 * or when it already holds point values with no owner recorded (written by an unknown installation).
 * Call before the value tables are created.
 */
export async function claimTable(query: Query, table: string, installation: string): Promise<void> {
  if (!INSTALLATION_ID.test(installation)) throw new Error(`not an installation id: ${installation}`);
  const owners = ownerTable(table);
  if (!(await tableExists(query, owners)) && (await tableExists(query, table))) {
    throw new ConfigError(
      `QUESTDB_TABLE: QuestDB table ${table} holds point values but records no owner (${owners} is missing): it was not ` +
        'written by this service, or by an older version of it; choose another QUESTDB_TABLE (or drop that table)',
    );
  }
  await query(`CREATE TABLE IF NOT EXISTS ${owners} (owner VARCHAR, claimed TIMESTAMP) TIMESTAMP(claimed) PARTITION BY NONE BYPASS WAL`);
  let owner = await earliestClaim(query, owners);
  if (owner === undefined) {
    // The id is our own UUID (checked above), never client text: a literal is safe.
    await query(`INSERT INTO ${owners} VALUES ('${installation}', now())`);
    owner = await earliestClaim(query, owners);
  }
  if (owner !== installation) {
    throw new ConfigError(
      `QUESTDB_TABLE: QuestDB table ${table} belongs to another installation (metadata store ${owner}), not to this one ` +
        `(metadata store ${installation}): choose another QUESTDB_TABLE, or point DATABASE_URL / DATA_DIR at the metadata store that owns it`,
    );
  }
}
