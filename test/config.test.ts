import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { ConfigError, loadConfig } from '../src/config.js';

/** loadConfig must refuse env with a ConfigError whose message names the variable. */
function assertRefused(env: Record<string, string>, variable: string): void {
  assert.throws(
    () => loadConfig(env),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError, `expected ConfigError, got ${String(err)}`);
      assert.ok(err.message.includes(variable), `message "${err.message}" does not name ${variable}`);
      return true;
    },
  );
}

describe('loadConfig', () => {
  describe('defaults (empty environment)', () => {
    const config = loadConfig({});

    it('listens on port 8080 on every interface', () => {
      assert.equal(config.port, 8080);
      assert.equal(config.host, '0.0.0.0');
    });

    it('names the instance <host name>:<pid>', () => {
      assert.equal(config.instanceName, `${hostname()}:${process.pid}`);
    });

    it('keeps data under ./data, resolved to an absolute path', () => {
      assert.equal(config.dataDir, resolve('./data'));
      assert.ok(config.dataDir.startsWith('/'));
    });

    it('uses the embedded metadata engine and no admin password override', () => {
      assert.equal(config.databaseUrl, undefined);
      assert.equal(config.databaseSchema, undefined);
      assert.equal(config.adminPassword, undefined);
      assert.equal(config.logLevel, 'info');
    });

    it('enables rate limits: anonymous 40 then 5/s, logins 5 then 1/min, users 1000 then 500/s', () => {
      assert.equal(config.rateLimit.enabled, true);
      assert.deepEqual(config.rateLimit.anonymous, { burst: 40, refillPerSecond: 5 });
      assert.deepEqual(config.rateLimit.loginPerIp, { burst: 5, refillPerSecond: 1 / 60 });
      assert.deepEqual(config.rateLimit.loginPerUser, { burst: 5, refillPerSecond: 1 / 60 });
      assert.deepEqual(config.rateLimit.loginPerUserIp, { burst: 5, refillPerSecond: 1 / 60 });
      assert.deepEqual(config.rateLimit.user, { burst: 1000, refillPerSecond: 500 });
    });

    it('exempts addresses that logged in within 30 days from the per-username login limit', () => {
      assert.equal(config.loginKnownAddressDays, 30);
    });

    it('uses the documented session, token and auth defaults', () => {
      assert.deepEqual(config.session, { idleMinutes: 24 * 60, maxDays: 7, cookieSecure: false });
      assert.deepEqual(config.jwt, { defaultExpiryMinutes: 5, maxExpiryDays: 365 });
      assert.equal(config.basicAuthEnabled, false);
      assert.equal(config.passwordMaxAgeDays, 0);
      assert.deepEqual(config.trustProxy, { mode: 'off' });
    });

    it('runs event handlers with the documented defaults and any webhook host', () => {
      assert.deepEqual(config.eventHandlers, { maxPending: 10_000, concurrency: 8, pollMs: 2_000, retryFirstMs: 10_000, deliveryRetention: { periods: 30, type: 'DAYS' } });
      assert.equal(config.webhookAllowedHosts, undefined);
    });

    it('bounds point-value reads: 100 XIDs and 200,000 rollup periods per request', () => {
      assert.deepEqual(config.pointValueReads, { maxXids: 100, maxRollupPeriods: 200_000 });
    });

    it('gives a store call 10 s before its request is answered 503', () => {
      assert.equal(config.storeTimeoutMs, 10_000);
    });

    it('treats empty variables as unset', () => {
      const blank = loadConfig({ PORT: '', DATA_DIR: '', ADMIN_PASSWORD: '', DATABASE_URL: '', LOG_LEVEL: '', TRUST_PROXY: '' });
      assert.deepEqual(blank, config);
    });
  });

  describe('overrides', () => {
    it('reads every kind of value', () => {
      const config = loadConfig({
        PORT: '9090',
        DATA_DIR: 'var/dds',
        DATABASE_URL: 'postgresql://svc@db.example:5432/dds',
        DATABASE_SCHEMA: 'tenant_a',
        LOG_LEVEL: 'DEBUG',
        TRUST_PROXY: 'yes',
        BASIC_AUTH_ENABLED: 'true',
        RATE_LIMIT_ENABLED: '0',
        RATE_LIMIT_ANON_BURST: '100',
        RATE_LIMIT_ANON_PER_SECOND: '0.5',
        ADMIN_PASSWORD: 'eight888',
      });
      assert.equal(config.port, 9090);
      assert.equal(config.dataDir, resolve('var/dds'));
      assert.equal(config.databaseUrl, 'postgresql://svc@db.example:5432/dds');
      assert.equal(config.databaseSchema, 'tenant_a');
      assert.equal(config.logLevel, 'debug');
      assert.deepEqual(config.trustProxy, { mode: 'hops', hops: 1 });
      assert.equal(config.basicAuthEnabled, true);
      assert.equal(config.rateLimit.enabled, false);
      assert.deepEqual(config.rateLimit.anonymous, { burst: 100, refillPerSecond: 0.5 });
      assert.equal(config.adminPassword, 'eight888');
    });

    it('reads TRUST_PROXY as off, true (one hop), a number of hops, or a list of proxies', () => {
      for (const off of ['false', '0', 'off', 'no', ' FALSE ']) assert.deepEqual(loadConfig({ TRUST_PROXY: off }).trustProxy, { mode: 'off' }, off);
      for (const one of ['true', 'on', '1', 'TRUE']) assert.deepEqual(loadConfig({ TRUST_PROXY: one }).trustProxy, { mode: 'hops', hops: 1 }, one);
      assert.deepEqual(loadConfig({ TRUST_PROXY: '3' }).trustProxy, { mode: 'hops', hops: 3 });
      assert.deepEqual(loadConfig({ TRUST_PROXY: '10.0.0.0/8, ::1,192.0.2.7,fd00::/8' }).trustProxy, {
        mode: 'list',
        proxies: ['10.0.0.0/8', '::1', '192.0.2.7', 'fd00::/8'],
      });
    });

    it('reads the per-(username, IP) login bucket and the known-address window', () => {
      const config = loadConfig({ RATE_LIMIT_LOGIN_USER_IP_BURST: '3', RATE_LIMIT_LOGIN_USER_IP_PER_SECOND: '0.5', LOGIN_KNOWN_ADDRESS_DAYS: '0' });
      assert.deepEqual(config.rateLimit.loginPerUserIp, { burst: 3, refillPerSecond: 0.5 });
      assert.equal(config.loginKnownAddressDays, 0);
      assert.equal(loadConfig({ LOGIN_KNOWN_ADDRESS_DAYS: '7' }).loginKnownAddressDays, 7);
    });

    it('reads the point-value read limits, their ranges included', () => {
      assert.deepEqual(loadConfig({ POINT_VALUES_MAX_XIDS: '1', ROLLUP_MAX_PERIODS: '1000' }).pointValueReads, { maxXids: 1, maxRollupPeriods: 1000 });
      assert.deepEqual(loadConfig({ POINT_VALUES_MAX_XIDS: '10000', ROLLUP_MAX_PERIODS: '10000000' }).pointValueReads, {
        maxXids: 10_000,
        maxRollupPeriods: 10_000_000,
      });
    });

    it('reads JSON_MAX_DEPTH: 64 by default, 8 to 1,000', () => {
      assert.equal(loadConfig({}).jsonMaxDepth, 64);
      assert.equal(loadConfig({ JSON_MAX_DEPTH: '8' }).jsonMaxDepth, 8);
      assert.equal(loadConfig({ JSON_MAX_DEPTH: '1000' }).jsonMaxDepth, 1000);
    });

    it('accepts port 0 (an ephemeral port, used by the tests)', () => {
      assert.equal(loadConfig({ PORT: '0' }).port, 0);
    });
  });

  describe('refusals name the variable', () => {
    it('PORT that is not an integer or out of range', () => {
      for (const PORT of ['http', '80.5', '-1', '65536', '8080abc']) assertRefused({ PORT }, 'PORT');
    });

    it('a boolean that is neither true nor false', () => {
      assertRefused({ BASIC_AUTH_ENABLED: 'maybe' }, 'BASIC_AUTH_ENABLED');
      assertRefused({ RATE_LIMIT_ENABLED: 'enabled' }, 'RATE_LIMIT_ENABLED');
      assertRefused({ COOKIE_SECURE: '2' }, 'COOKIE_SECURE');
    });

    it('INSTANCE_NAME with characters that do not print, or longer than 100 characters', () => {
      assert.equal(loadConfig({ INSTANCE_NAME: ' web-a ' }).instanceName, 'web-a');
      assert.equal(loadConfig({ INSTANCE_NAME: 'Zürich 2 · büro' }).instanceName, 'Zürich 2 · büro');
      assert.equal(loadConfig({ INSTANCE_NAME: 'n'.repeat(100) }).instanceName, 'n'.repeat(100));
      for (const INSTANCE_NAME of ['web\na', 'web\u0000a', 'web\u200ba', 'web\ud800a', 'web\u2028a', 'n'.repeat(101)]) assertRefused({ INSTANCE_NAME }, 'INSTANCE_NAME');
    });

    it('DATABASE_URL that is not a postgres URL', () => {
      assertRefused({ DATABASE_URL: 'not a url' }, 'DATABASE_URL');
      assertRefused({ DATABASE_URL: 'mysql://root@localhost/db' }, 'DATABASE_URL');
    });

    it('ADMIN_PASSWORD shorter than 8 characters', () => {
      assertRefused({ ADMIN_PASSWORD: 'seven77' }, 'ADMIN_PASSWORD');
      assert.equal(loadConfig({ ADMIN_PASSWORD: 'eight888' }).adminPassword, 'eight888');
    });

    it('LOG_LEVEL outside pino\'s levels', () => {
      assertRefused({ LOG_LEVEL: 'verbose' }, 'LOG_LEVEL');
    });

    it('rate-limit numbers that are not positive', () => {
      assertRefused({ RATE_LIMIT_USER_PER_SECOND: '0' }, 'RATE_LIMIT_USER_PER_SECOND');
      assertRefused({ RATE_LIMIT_LOGIN_IP_BURST: '0' }, 'RATE_LIMIT_LOGIN_IP_BURST');
    });

    it('TRUST_PROXY that is no boolean, hop count (1-32) nor list of addresses and CIDR ranges', () => {
      for (const TRUST_PROXY of ['maybe', '33', '10.0.0.0/33', '::1/129', '10.0.0.1,', '10.0.0.1, proxy.local', '10.0.0.0/8/8', '[::1]', '10.0.0.1:80', '-1']) {
        assertRefused({ TRUST_PROXY }, 'TRUST_PROXY');
      }
    });

    it('LOGIN_KNOWN_ADDRESS_DAYS that is negative or not an integer', () => {
      assertRefused({ LOGIN_KNOWN_ADDRESS_DAYS: '-1' }, 'LOGIN_KNOWN_ADDRESS_DAYS');
      assertRefused({ LOGIN_KNOWN_ADDRESS_DAYS: '1.5' }, 'LOGIN_KNOWN_ADDRESS_DAYS');
    });

    it('JSON_MAX_DEPTH outside 8 to 1,000 or not an integer', () => {
      for (const JSON_MAX_DEPTH of ['7', '1001', '64.5', 'deep']) assertRefused({ JSON_MAX_DEPTH }, 'JSON_MAX_DEPTH');
    });

    it('point-value read limits outside their ranges or not integers', () => {
      for (const POINT_VALUES_MAX_XIDS of ['0', '10001', '1.5', 'many']) assertRefused({ POINT_VALUES_MAX_XIDS }, 'POINT_VALUES_MAX_XIDS');
      for (const ROLLUP_MAX_PERIODS of ['999', '10000001', '2e5', '-1']) assertRefused({ ROLLUP_MAX_PERIODS }, 'ROLLUP_MAX_PERIODS');
    });

    it('STORE_TIMEOUT_MS: an integer number of ms from 500 to 3600000', () => {
      assert.equal(loadConfig({ STORE_TIMEOUT_MS: '1500' }).storeTimeoutMs, 1500);
      for (const STORE_TIMEOUT_MS of ['499', '3600001', '1.5', '10s', '-1']) assertRefused({ STORE_TIMEOUT_MS }, 'STORE_TIMEOUT_MS');
    });

    it('QuestDB settings: only together, http(s) only, protocol version 1 only, a table name that is an identifier', () => {
      const both = { QUESTDB_ILP: 'http::addr=q:9000', QUESTDB_PG: 'postgres://admin:quest@q:8812/qdb' };
      assert.equal(loadConfig(both).values.questdbTable, 'point_values');
      assert.equal(loadConfig({ ...both, QUESTDB_TABLE: 'site_7_values', QUESTDB_PROTOCOL_VERSION: '1' }).values.questdbTable, 'site_7_values');
      assertRefused({ QUESTDB_ILP: both.QUESTDB_ILP }, 'QUESTDB_ILP');
      assertRefused({ ...both, QUESTDB_ILP: 'tcp::addr=q:9009' }, 'QUESTDB_ILP');
      assertRefused({ ...both, QUESTDB_PROTOCOL_VERSION: '2' }, 'QUESTDB_PROTOCOL_VERSION');
      for (const QUESTDB_TABLE of ['Point_Values', '1values', 'a-b', 'a;drop', 'x'.repeat(64)]) assertRefused({ ...both, QUESTDB_TABLE }, 'QUESTDB_TABLE');
    });

    it('VALUE_STORE: duckdb by default, questdb when its settings are there, postgres only with DATABASE_URL', () => {
      const questdb = { QUESTDB_ILP: 'http::addr=q:9000', QUESTDB_PG: 'postgres://admin:quest@q:8812/qdb' };
      const db = { DATABASE_URL: 'postgres://svc@db:5432/dds' };
      assert.equal(loadConfig({}).values.engine, 'duckdb');
      assert.equal(loadConfig(questdb).values.engine, 'questdb');
      assert.equal(loadConfig({ ...questdb, VALUE_STORE: 'duckdb' }).values.engine, 'duckdb');
      assert.equal(loadConfig({ ...questdb, ...db, VALUE_STORE: 'Postgres' }).values.engine, 'postgres');
      assert.equal(loadConfig({ ...db, VALUE_STORE: ' postgres ' }).values.engine, 'postgres');
      assert.equal(loadConfig({ VALUE_STORE: '' }).values.engine, 'duckdb');
      for (const VALUE_STORE of ['postgresql', 'pg', 'sqlite', 'duckdb,questdb']) assertRefused({ ...db, VALUE_STORE }, 'VALUE_STORE');
      assertRefused({ VALUE_STORE: 'questdb' }, 'QUESTDB_ILP');
      assertRefused({ VALUE_STORE: 'questdb', QUESTDB_ILP: questdb.QUESTDB_ILP }, 'QUESTDB_PG');
      for (const name of ['VALUE_STORE', 'DATABASE_URL']) {
        assertRefused({ VALUE_STORE: 'postgres' }, name);
        assertRefused({ VALUE_STORE: 'postgres', DATABASE_URL: '' }, name);
      }
      assertRefused({ VALUE_STORE: 'postgres', DATABASE_URL: 'mysql://db/x' }, 'DATABASE_URL');
    });

    it('DATABASE_SCHEMA that is not a plain lower-case identifier', () => {
      assertRefused({ DATABASE_SCHEMA: 'x; drop table users' }, 'DATABASE_SCHEMA');
    });

    it('HISTORY_RETENTION that is not a count and a unit of days to years', () => {
      for (const value of ['forever', '0 DAYS', '2 HOURS', '2', 'YEARS', '-1 YEARS']) assertRefused({ HISTORY_RETENTION: value }, 'HISTORY_RETENTION');
    });
  });

  describe('HISTORY_RETENTION', () => {
    it('keeps history forever when unset or empty', () => {
      assert.equal(loadConfig({}).historyRetention, undefined);
      assert.equal(loadConfig({ HISTORY_RETENTION: ' ' }).historyRetention, undefined);
    });

    it('reads a count and a unit, in any case, singular or plural', () => {
      assert.deepEqual(loadConfig({ HISTORY_RETENTION: '2 YEARS' }).historyRetention, { periods: 2, type: 'YEARS' });
      assert.deepEqual(loadConfig({ HISTORY_RETENTION: '90 days' }).historyRetention, { periods: 90, type: 'DAYS' });
      assert.deepEqual(loadConfig({ HISTORY_RETENTION: '1 week' }).historyRetention, { periods: 1, type: 'WEEKS' });
      assert.deepEqual(loadConfig({ HISTORY_RETENTION: '6months' }).historyRetention, { periods: 6, type: 'MONTHS' });
    });
  });

  describe('WEBHOOK_ALLOWED_HOSTS and EVENT_HANDLER_*', () => {
    it('reads hosts and host:port entries, lower-cased, IPv6 in brackets', () => {
      const config = loadConfig({ WEBHOOK_ALLOWED_HOSTS: ' Hooks.Example.com , 10.0.0.5:8443,[::1]:9000,' });
      assert.deepEqual(config.webhookAllowedHosts, [{ host: 'hooks.example.com' }, { host: '10.0.0.5', port: 8443 }, { host: '[::1]', port: 9000 }]);
    });

    it('refuses malformed entries and out-of-range settings, naming the variable', () => {
      for (const bad of ['http://a.example', 'a.example:0', 'a.example:70000', 'a b', 'user@a.example', 'a.example:x']) assertRefused({ WEBHOOK_ALLOWED_HOSTS: bad }, 'WEBHOOK_ALLOWED_HOSTS');
      assertRefused({ EVENT_HANDLER_MAX_PENDING: '0' }, 'EVENT_HANDLER_MAX_PENDING');
      assertRefused({ EVENT_HANDLER_CONCURRENCY: 'many' }, 'EVENT_HANDLER_CONCURRENCY');
      assertRefused({ EVENT_HANDLER_POLL_MS: '10' }, 'EVENT_HANDLER_POLL_MS');
      assertRefused({ EVENT_HANDLER_RETRY_MS: '1' }, 'EVENT_HANDLER_RETRY_MS');
      for (const bad of ['forever', '0 DAYS', '12 HOURS', '30']) assertRefused({ EVENT_HANDLER_DELIVERY_RETENTION: bad }, 'EVENT_HANDLER_DELIVERY_RETENTION');
    });

    it('EVENT_HANDLER_DELIVERY_RETENTION: a count and a unit, 30 days when unset or empty', () => {
      assert.deepEqual(loadConfig({ EVENT_HANDLER_DELIVERY_RETENTION: '' }).eventHandlers.deliveryRetention, { periods: 30, type: 'DAYS' });
      assert.deepEqual(loadConfig({ EVENT_HANDLER_DELIVERY_RETENTION: '7 days' }).eventHandlers.deliveryRetention, { periods: 7, type: 'DAYS' });
      assert.deepEqual(loadConfig({ EVENT_HANDLER_DELIVERY_RETENTION: '1 YEAR' }).eventHandlers.deliveryRetention, { periods: 1, type: 'YEARS' });
    });
  });

  describe('SMTP_URL, SMTP_FROM and PUBLIC_URL', () => {
    it('has no mail and no public URL when unset', () => {
      const config = loadConfig({});
      assert.equal(config.mail, undefined);
      assert.equal(config.publicUrl, undefined);
    });

    it('reads smtp:// and smtps:// URLs with credentials, and the sender', () => {
      const smtpUrl = 'smtps://alarms:s%40cret@mail.example.com:465';
      assert.deepEqual(loadConfig({ SMTP_URL: smtpUrl, SMTP_FROM: '"Alarms" <alarms@example.com>' }).mail, { smtpUrl, from: '"Alarms" <alarms@example.com>' });
      assert.equal(loadConfig({ SMTP_URL: 'smtp://mail:25', SMTP_FROM: 'a@example.com' }).mail?.smtpUrl, 'smtp://mail:25');
    });

    it('refuses one without the other, another scheme, and a sender that is not an address, without showing the password', () => {
      assertRefused({ SMTP_URL: 'smtp://mail:25' }, 'SMTP_FROM');
      assertRefused({ SMTP_FROM: 'a@example.com' }, 'SMTP_URL');
      assertRefused({ SMTP_URL: 'http://mail:25', SMTP_FROM: 'a@example.com' }, 'SMTP_URL');
      assertRefused({ SMTP_URL: 'smtp://mail:25', SMTP_FROM: 'alarms' }, 'SMTP_FROM');
      assert.throws(() => loadConfig({ SMTP_URL: 'ftp://u:hunter2@mail', SMTP_FROM: 'a@example.com' }), (err: Error) => !err.message.includes('hunter2'));
    });

    it('keeps PUBLIC_URL without its trailing slash; refuses what is not an http(s) URL', () => {
      assert.equal(loadConfig({ PUBLIC_URL: 'https://scada.example.com/' }).publicUrl, 'https://scada.example.com');
      assert.equal(loadConfig({ PUBLIC_URL: 'http://host:8080/dds/' }).publicUrl, 'http://host:8080/dds');
      for (const value of ['scada.example.com', 'ftp://x', 'https://x/?a=1']) assertRefused({ PUBLIC_URL: value }, 'PUBLIC_URL');
    });
  });
});
