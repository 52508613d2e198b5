// QuestDB point-value store: writes over ILP/HTTP (@questdb/nodejs-client), reads over the PostgreSQL
// wire protocol (pg). Written from the QuestDB documentation; each file notes the facts it relies on:
// config (options, Sender configuration), sql (table layout, statements), time (timestamps on the
// wire), rows (PG-wire rows → values), ilp (rows out), wal (waiting for visibility), store, open.
export { buildSenderConfig, DEFAULT_TABLE, validateTableName, type QuestDbStoreOptions } from './config.js';
export { senderLog, validateBatch, writeRows, type IlpRowSink, type IlpSender } from './ilp.js';
export { openQuestDbStore } from './open.js';
export { bucketRowToAggregate, foldNumericRows, rowToStoredValue, type BucketRow, type NumericRow, type ValueRow } from './rows.js';
export { checkSchema, createTableSql, statements, type TextType } from './sql.js';
export { initQuestDbStore, RANGE_BATCH, type QuestDbConnections, type QuestDbStore, type QuestDbStoreInit } from './store.js';
export { ceilToBucket, floorToBucket, MAX_TS_MS, microsParam, microsToMs, msParam } from './time.js';
export { isWalWaitFailure, parseWalRow, waitForWalApply, WalApplyTimeoutError, WalSuspendedError, type WaitForWalOptions, type WalStatus } from './wal.js';
