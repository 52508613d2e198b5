// QuestDB point-value store: writes over ILP/HTTP (our own line encoder and transport), reads over the
// PostgreSQL wire protocol (pg), hourly aggregates kept in a table beside the values. Each file notes
// the facts it relies on: config (options, the ILP configuration string), negotiate (the server check),
// sql (tables, literal statements), ilp (lines and transport), requests (an append's lines cut at hour ends), hourly (aggregate rows), rows, time, wal
// (waiting for visibility), owner (which installation owns the tables), store, open.
export { DEFAULT_TABLE, parseIlpConfig, validateTableName, type QuestDbStoreOptions } from './config.js';
export { foldRecomputed, hourlyRowToAggregate, planHourly, SeriesTails, type HourlyRow, type HourSpan, type NumericRow } from './hourly.js';
export { ilpString, IlpLines, IlpRequestError, ilpTransport, validateTimestamp, type IlpTransport } from './ilp.js';
export { announcedVersions, checkIlpServer, fetchSettings } from './negotiate.js';
export { openQuestDbStore } from './open.js';
export { claimTable, ownerTable } from './owner.js';
export { appendLines, MIN_PARALLEL_REQUEST_BYTES, requestsAtHours, type HourLines } from './requests.js';
export { field, rowToStoredValue, truthy, type ValueRow } from './rows.js';
export { checkSchema, createTableStatements, seriesLiteral, statements, tableNames, tsLiteral } from './sql.js';
export { initQuestDbStore, RANGE_BATCH, validateBatch, type QuestDbConnections, type QuestDbStore, type QuestDbStoreInit } from './store.js';
export { layerOf, mergeHours, mergeValues, Unapplied, type Layer } from './unapplied.js';
export { ceilToBucket, floorToBucket, MAX_TS_MS, microsToMs, QUESTDB_TIME_RANGE } from './time.js';
export { isWalWaitFailure, parseWalRow, WalApplyTimeoutError, WalSuspendedError, WalWatcher, type WalStatus, type WalWatcherOptions } from './wal.js';
