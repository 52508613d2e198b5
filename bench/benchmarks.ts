// Every benchmark the runner knows, in the order `npm run bench` runs them. To add one, write a
// module exporting a Benchmark (see lib/benchmark.ts; lib/ has servers, load, API set-up, report)
// and list it here.
import { forgedTokenBench } from './forged-token.js';
import { handlerMatching } from './handler-matching.js';
import { bounded } from './bounded.js';
import { historian } from './historian.js';
import { jsonDepth } from './json-depth.js';
import { lineProtocol } from './line-protocol.js';
import { importBench } from './import.js';
import type { Benchmark } from './lib/benchmark.js';
import { loginBench } from './login.js';
import { modbus } from './modbus.js';
import { opcua } from './opcua.js';
import { bacnet } from './bacnet.js';
import { requests } from './requests.js';
import { retention } from './retention.js';
import { rqlList } from './rql-list.js';
import { sparkplug } from './sparkplug.js';
import { startup } from './startup.js';
import { websocketBench } from './websocket.js';

export const benchmarks: readonly Benchmark[] = [startup, loginBench, requests, forgedTokenBench, rqlList, historian, lineProtocol, retention, importBench, bounded, jsonDepth, modbus, opcua, bacnet, sparkplug, websocketBench, handlerMatching];
