// Mango's /json-data over the JSON store's items: the body is the document itself, and a dot path
// names a value inside it to read, replace (POST), merge into (PUT) or delete. Same items, same
// permissions, size and depth limits as /json-store (services/json-store.ts does every write).
//
// As Mango's JsonDataRestController: POST without a path creates the item or replaces its document;
// POST with a path replaces the value there (or adds the member) in an existing item; PUT merges an
// object's members into the object at the path, or appends the body to the array there; DELETE
// without a path deletes the item, with one removes that value. A write answers the item with, as
// jsonData, what it wrote: POST the body, PUT the merged value, DELETE with a path the document.
import { deleteAt, mergeAt, parsePath, setAt } from '../core/json-text.js';
import type { JsonStoreItem, JsonStoreRecord } from '../store/metadata/json-store.js';
import type { JsonStoreFields, JsonStoreService } from './json-store.js';
import type { Principal } from './permissions.js';

export class JsonDataService {
  constructor(private readonly store: JsonStoreService) {}

  /** The XIDs the user may read, as a JSON array. */
  xids(user: Principal): Promise<string> {
    return this.store.xids(user);
  }

  get(user: Principal, xid: string): Promise<JsonStoreItem> {
    return this.store.get(user, xid);
  }

  /** The item with the value at `rawPath` as its document. */
  async getAt(user: Principal, xid: string, rawPath: string): Promise<JsonStoreItem> {
    const { record, value } = await this.store.getAt(user, xid, rawPath);
    return withDoc(record, value);
  }

  /** POST: the body as the whole document (a new item when none has the XID), or as the value at the path. */
  async replace(user: Principal, xid: string, rawPath: string | undefined, fields: JsonStoreFields, bodyText: string): Promise<{ item: JsonStoreItem; created: boolean }> {
    const data = this.store.document(bodyText);
    if (rawPath === undefined) return this.store.put(user, xid, fields, data);
    const path = parsePath(rawPath);
    const { item } = await this.store.edit(user, xid, fields, (doc) => ({ doc: setAt(doc, path, data.doc), answer: undefined }));
    return { item: withDoc(item, data.doc), created: false };
  }

  /** PUT: the body merged into the value at the path (the whole document without one). */
  async merge(user: Principal, xid: string, rawPath: string | undefined, fields: JsonStoreFields, bodyText: string): Promise<JsonStoreItem> {
    const data = this.store.document(bodyText);
    const path = rawPath === undefined ? [] : parsePath(rawPath);
    const { item, answer } = await this.store.edit(user, xid, fields, (doc) => {
      const merged = mergeAt(doc, path, data.doc);
      return { doc: merged.doc, answer: merged.merged };
    });
    return withDoc(item, answer);
  }

  /** DELETE: the item, or the value at the path (answering the item as it is now). */
  async delete(user: Principal, xid: string, rawPath: string | undefined): Promise<JsonStoreItem> {
    if (rawPath === undefined) return this.store.delete(user, xid);
    const path = parsePath(rawPath);
    return (await this.store.edit(user, xid, {}, (doc) => ({ doc: deleteAt(doc, path), answer: undefined }))).item;
  }
}

function withDoc(record: JsonStoreRecord, doc: string): JsonStoreItem {
  return { id: record.id, xid: record.xid, name: record.name, readPermission: record.readPermission, editPermission: record.editPermission, doc };
}
