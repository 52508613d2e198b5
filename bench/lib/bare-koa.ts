// The floor for one request: Koa + @koa/router answering a constant JSON body, no middleware, in a
// process of its own like the service. `node --import tsx bench/lib/bare-koa.ts <port>`.
import Koa from 'koa';
import Router from '@koa/router';

const port = Number(process.argv[2]);
const app = new Koa();
const router = new Router();
const body = '[{"timestamp":1735689600000,"value":21.5}]';
router.get('/constant', (ctx) => {
  ctx.type = 'application/json';
  ctx.body = body;
});
app.use(router.routes());
app.listen(port, '127.0.0.1');
