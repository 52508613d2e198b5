import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from './helpers/app.js';
import { ApiClient } from './helpers/client.js';
import { announceEngines, metadataEngines } from './helpers/engines.js';

announceEngines();
for (const engine of metadataEngines()) {
  describe(`smoke (${engine})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp(engine);
    });
    after(() => app.stop());

    it('logs in with a client-generated CSRF token and reads /users/current', async () => {
      const c = new ApiClient(app.url);
      await c.login('admin', 'admin');
      const me = await c.get<{ username: string; permissions: string[] }>('/rest/latest/users/current');
      assert.equal(me.status, 200);
      assert.equal(me.body.username, 'admin');
      assert.deepEqual(me.body.permissions, ['superadmin']);
    });
  });
}
