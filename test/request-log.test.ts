// The request log: one line per request; a proxy's healthy health checks (every 2 s from HAProxy)
// at debug, everything else, failing health checks included, at info.
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { requestLog } from '../src/http/request-log.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { capturingLogger, flushed, type LogLine } from './helpers/log.js';

const DEBUG = 20;
const INFO = 30;

describe('request log', () => {
  describe('levels, on a Koa app of its own', () => {
    const { log, lines } = capturingLogger('debug');
    let server: Server;
    let url: string;
    let healthStatus = 200;

    before(async () => {
      const app = new Koa();
      app.use(requestLog(log));
      app.use((ctx) => {
        ctx.status = ctx.path === '/health' ? healthStatus : ctx.path === '/health/live' ? 200 : 404;
        ctx.body = { path: ctx.path };
      });
      server = app.listen(0, '127.0.0.1');
      await new Promise((resolve) => server.once('listening', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    after(() => new Promise((resolve) => server.close(resolve)));

    async function levelOf(path: string): Promise<number> {
      const before = lines.length;
      await (await fetch(url + path)).arrayBuffer();
      await flushed();
      const logged = lines.slice(before).filter((l: LogLine) => l.msg === 'request');
      assert.equal(logged.length, 1, `one line for ${path}`);
      assert.equal(logged[0]!.path, path.replace(/\?.*/, ''));
      return logged[0]!.level as number;
    }

    it('logs healthy /health and /health/live at debug, whatever the query', async () => {
      healthStatus = 200;
      assert.equal(await levelOf('/health'), DEBUG);
      assert.equal(await levelOf('/health/live'), DEBUG);
      assert.equal(await levelOf('/health?from=haproxy'), DEBUG);
    });

    it('logs a failing health check and every other request at info', async () => {
      healthStatus = 503;
      assert.equal(await levelOf('/health'), INFO);
      assert.equal(await levelOf('/health/'), INFO);
      assert.equal(await levelOf('/healthz'), INFO);
      assert.equal(await levelOf('/rest/latest/health'), INFO);
    });
  });

  describe('on the service at LOG_LEVEL info', () => {
    const { log, lines } = capturingLogger('info');
    let app: TestApp;
    before(async () => {
      app = await startTestApp('pglite', {}, log);
    });
    after(() => app.stop());

    it('writes nothing for a proxy polling /health, and a line for a request', async () => {
      await flushed();
      const before = lines.length;
      for (let i = 0; i < 10; i++) assert.equal((await fetch(`${app.url}/health`)).status, 200);
      assert.equal((await fetch(`${app.url}/health/live`)).status, 200);
      assert.equal((await fetch(`${app.url}/rest/latest/users/current`)).status, 401);
      await flushed();
      const logged = lines.slice(before).filter((l) => l.msg === 'request');
      assert.deepEqual(logged.map((l) => [l.path, l.status, l.level]), [['/rest/latest/users/current', 401, INFO]]);
    });
  });
});
