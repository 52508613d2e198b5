// Swagger UI at /swagger-ui/: the installed swagger-ui-dist assets (no CDN) behind our own page and
// initializer, which point at /rest/latest/openapi.json. Only a fixed list of files is served.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import Router from '@koa/router';
import { pageHeaders } from '../http/security-headers.js';
import type { AppContext, AppState } from '../http/state.js';
import { OPENAPI_PATH } from './openapi.js';

export const SWAGGER_UI_PATH = '/swagger-ui';

const distDir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/** Assets taken from swagger-ui-dist as they are. */
const ASSETS: Record<string, string> = {
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'application/javascript; charset=utf-8',
  'swagger-ui.css': 'text/css; charset=utf-8',
  'index.css': 'text/css; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};

const INDEX_HTML = `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="UTF-8">
    <title>Device-data service API</title>
    <link rel="stylesheet" type="text/css" href="./swagger-ui.css">
    <link rel="stylesheet" type="text/css" href="./index.css">
    <link rel="icon" type="image/png" href="./favicon-32x32.png" sizes="32x32">
    <link rel="icon" type="image/png" href="./favicon-16x16.png" sizes="16x16">
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="./swagger-ui-bundle.js" charset="UTF-8"></script>
    <script src="./swagger-ui-standalone-preset.js" charset="UTF-8"></script>
    <script src="./swagger-initializer.js" charset="UTF-8"></script>
  </body>
</html>
`;

// "Try it out" with a session: the double-submit CSRF rule needs the XSRF-TOKEN cookie echoed in
// X-XSRF-TOKEN; before the first login the client makes up the token, as the contract allows.
const INITIALIZER_JS = `window.onload = function () {
  function xsrfToken() {
    var m = document.cookie.match(/(?:^|;\\s*)XSRF-TOKEN=([^;]*)/);
    if (m) return decodeURIComponent(m[1]);
    var bytes = new Uint8Array(24);
    crypto.getRandomValues(bytes);
    var token = Array.prototype.map.call(bytes, function (b) { return ('0' + b.toString(16)).slice(-2); }).join('');
    document.cookie = 'XSRF-TOKEN=' + token + '; Path=/; SameSite=Lax';
    return token;
  }
  window.ui = SwaggerUIBundle({
    url: ${JSON.stringify(OPENAPI_PATH)},
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    plugins: [SwaggerUIBundle.plugins.DownloadUrl],
    layout: 'StandaloneLayout',
    requestInterceptor: function (req) {
      if (!/^(GET|HEAD|OPTIONS)$/i.test(req.method || 'GET')) req.headers['X-XSRF-TOKEN'] = xsrfToken();
      return req;
    }
  });
};
`;

interface File {
  body: Buffer;
  type: string;
  etag: string;
  /** Our own page and initializer change with the service; the vendor assets only with the package. */
  cacheControl: string;
}

function file(body: Buffer, type: string, cacheControl: string): File {
  return { body, type, cacheControl, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` };
}

// Swagger UI runs only its own scripts; its React views set style attributes (hence 'unsafe-inline'
// for styles only), its CSS embeds data: images, and "Try it out" calls this origin's API.
const PAGE_HEADERS = pageHeaders(
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'",
);

const REVALIDATE = 'no-cache';
const ONE_DAY = 'public, max-age=86400';

function send(ctx: AppContext, f: File): void {
  ctx.status = 200; // ctx.fresh looks only at 2xx responses
  ctx.set('Cache-Control', f.cacheControl);
  ctx.set('ETag', f.etag);
  ctx.set(PAGE_HEADERS);
  ctx.type = f.type;
  if (ctx.fresh) {
    ctx.status = 304;
    return;
  }
  ctx.body = f.body;
}

export function swaggerUiRouter(): Router<AppState> {
  // strict: /swagger-ui and /swagger-ui/ are different routes (the first redirects to the second).
  const router = new Router<AppState>({ strict: true });
  const own: Record<string, File> = {
    'index.html': file(Buffer.from(INDEX_HTML), 'text/html; charset=utf-8', REVALIDATE),
    'swagger-initializer.js': file(Buffer.from(INITIALIZER_JS), 'application/javascript; charset=utf-8', REVALIDATE),
  };
  // Vendor assets are read on first use (the bundle is 1.5 MB) and kept.
  const assets = new Map<string, Promise<File>>();
  const asset = (name: string, type: string): Promise<File> => {
    let f = assets.get(name);
    if (!f) {
      f = readFile(join(distDir, name)).then((body) => file(body, type, ONE_DAY));
      f.catch(() => assets.delete(name));
      assets.set(name, f);
    }
    return f;
  };

  router.get(SWAGGER_UI_PATH, (ctx) => {
    ctx.status = 301;
    ctx.redirect(`${SWAGGER_UI_PATH}/`);
  });
  router.get(`${SWAGGER_UI_PATH}/`, (ctx) => send(ctx, own['index.html']!));
  router.get(`${SWAGGER_UI_PATH}/:file`, async (ctx) => {
    const name = ctx.params.file!;
    const mine = Object.hasOwn(own, name) ? own[name] : undefined;
    if (mine) return send(ctx, mine);
    const type = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined;
    if (!type) return; // 404 from the error middleware
    send(ctx, await asset(name, type));
  });
  return router;
}
