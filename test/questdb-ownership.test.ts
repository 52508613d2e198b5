// Two installations, one QuestDB: a table belongs to the metadata store that first opened it, and a
// service on another metadata store refuses to start on it (exit code 2, both named) instead of mixing
// two histories under the same point ids. Live server only (TEST_QUESTDB_ILP / TEST_QUESTDB_PG).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import pg from 'pg';
import { ConfigError } from '../src/config.js';
import { projectRoot } from '../src/paths.js';
import { startTestApp } from './helpers/app.js';
import { loggedIn } from './helpers/client.js';
import { dropQuestDbTable, newQuestDbTableName } from './helpers/value-engines.questdb.js';
import { questdbSettings } from './helpers/value-engines.js';

const { ilp, pg: pgUrl } = questdbSettings;

/** Runs `npm start`'s entry through tsx with `env`; resolves with the exit code and stderr. */
function runMain(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(projectRoot, 'src', 'main.ts')], {
      cwd: projectRoot,
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

if (!ilp || !pgUrl) {
  describe('QuestDB table ownership', () => {
    it('is skipped: set TEST_QUESTDB_ILP and TEST_QUESTDB_PG to run it', function () {
      console.log('  (QuestDB ownership suite skipped: no QuestDB)');
      this.skip();
    });
  });
} else {
  describe('QuestDB table ownership', function () {
    this.timeout(120_000);
    const table = newQuestDbTableName();
    const env = { QUESTDB_ILP: ilp, QUESTDB_PG: pgUrl, QUESTDB_TABLE: table };
    after(() => dropQuestDbTable(pgUrl, table));

    it('lets the installation that created the table reopen it, and refuses every other one, naming both', async () => {
      const first = await startTestApp('pglite', env);
      const admin = await loggedIn(first.url, 'admin', 'admin');
      await admin.post('/rest/latest/data-sources', { xid: 'own-ds', name: 'Owner', modelType: 'VIRTUAL' });
      const point = await admin.post('/rest/latest/data-points', {
        xid: 'own-dp',
        name: 'Owned',
        dataSourceXid: 'own-ds',
        pointLocator: { dataType: 'NUMERIC', changeType: 'NO_CHANGE' },
      });
      assert.equal(point.status, 201, point.text);
      const written = await admin.post('/rest/latest/point-values', [{ xid: 'own-dp', value: 17, timestamp: Date.UTC(2024, 0, 1) }]);
      assert.equal(written.status, 200, written.text);
      await first.restart();
      const again = await loggedIn(first.url, 'admin', 'admin');
      const values = await again.get<{ value: number }[]>('/rest/latest/point-values/single/own-dp?from=2024-01-01T00:00:00Z&to=2024-01-02T00:00:00Z');
      assert.deepEqual(values.body.map((v) => v.value), [17], 'the owner reads its own history after a restart');

      // A brand-new installation (fresh DATA_DIR, hence a new metadata store) on the same table.
      await assert.rejects(startTestApp('pglite', env), (err: unknown) => {
        assert.ok(err instanceof ConfigError, String(err));
        assert.match(err.message, new RegExp(`^QUESTDB_TABLE: QuestDB table ${table} belongs to another installation \\(metadata store [0-9a-f-]{36}\\), not to this one \\(metadata store [0-9a-f-]{36}\\)`));
        return true;
      });
      await first.stop();
    });

    it('stops `npm start` with exit code 2 and the message when the table is another installation\'s', async () => {
      const { mkdtemp } = await import('node:fs/promises');
      const { tmpdir } = await import('node:os');
      const dataDir = await mkdtemp(join(tmpdir(), 'dds-owner-'));
      const run = await runMain({ ...env, DATA_DIR: dataDir });
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, /^configuration error: QUESTDB_TABLE: QuestDB table \w+ belongs to another installation/m);
    });

    it('refuses a table that holds point values but records no owner', async () => {
      const orphan = newQuestDbTableName();
      const client = new pg.Client({ connectionString: pgUrl });
      await client.connect();
      try {
        await client.query(`CREATE TABLE ${orphan} (series_id INT, value DOUBLE, ts TIMESTAMP) TIMESTAMP(ts) PARTITION BY DAY WAL`);
      } finally {
        await client.end();
      }
      try {
        await assert.rejects(startTestApp('pglite', { ...env, QUESTDB_TABLE: orphan }), /QUESTDB_TABLE: QuestDB table \w+ holds point values but records no owner/);
      } finally {
        await dropQuestDbTable(pgUrl, orphan);
      }
    });
  });
}
