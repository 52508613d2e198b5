// The read and edit roles of the data sources the user can read, by XID: a point may be edited through
// its source's edit permission (may.ts mayEditPoint), and a new point needs a source the user may edit.
// A superadmin may do everything, so nothing is fetched for one.
import { get, seg, type DataSource, type List } from './api.js';
import { isSuperadmin, mayAddPointTo, type Guarded, type Who } from './may.js';

/** Sources read in one request: an in() of this many XIDs stays well inside a URL's length. */
const CHUNK = 40;
/** At refresh all readable sources are read, up to this many (more: the missing ones by XID later). */
const ALL = 1000;

export class SourceRoles {
  private readonly roles = new Map<string, Guarded>();

  constructor(private readonly user: () => Who) {}

  /** Remembers the roles of sources read anyway (a list shown). */
  remember(sources: readonly DataSource[]): void {
    for (const ds of sources) this.roles.set(ds.xid, { readPermission: ds.readPermission, editPermission: ds.editPermission });
  }

  /** Reads the roles of every source the user can read again (a permission may have changed). */
  async reload(): Promise<void> {
    this.roles.clear();
    if (isSuperadmin(this.user())) return;
    this.remember((await get<List<DataSource>>(`/data-sources?sort(xid)&limit(${ALL})`)).items);
  }

  /** Reads the roles of these sources where not known yet (those the user cannot read stay unknown). */
  async learn(xids: readonly string[]): Promise<void> {
    if (isSuperadmin(this.user())) return;
    const unknown = [...new Set(xids)].filter((xid) => !this.roles.has(xid));
    for (let i = 0; i < unknown.length; i += CHUNK) {
      const chunk = unknown.slice(i, i + CHUNK);
      this.remember((await get<List<DataSource>>(`/data-sources?in(xid,${chunk.map(seg).join(',')})&limit(${CHUNK})`)).items);
      // One the user cannot read is not asked for again: no roles known, so none count.
      for (const xid of chunk) if (!this.roles.has(xid)) this.roles.set(xid, {});
    }
  }

  of(xid: string): Guarded | undefined {
    return this.roles.get(xid);
  }

  /** Whether the user may add a point to any source it can read. */
  anyEditable(): boolean {
    const user = this.user();
    if (isSuperadmin(user)) return true;
    return [...this.roles.values()].some((ds) => mayAddPointTo(user, ds));
  }
}
