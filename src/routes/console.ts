import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ConsoleAssetParamsSchema, ConsoleAssetSchema, ConsolePageSchema } from '../protocol/console-assets.js';
import { ErrorBodySchema } from '../protocol/http.js';
import { CodeError } from '../errors.js';
import { CONSOLE_CSP, ConsoleAssets, type ConsoleAsset } from '../server/console-assets.js';
import { addRoute } from '../server/route.js';
import type { ServerContext } from '../server/server-context.js';

// Built once per process: every app of a process serves the same files.
const shared = new ConsoleAssets();

function send(request: FastifyRequest, reply: FastifyReply, asset: ConsoleAsset): Buffer | FastifyReply {
  reply
    .header('content-type', asset.contentType)
    .header('content-security-policy', CONSOLE_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('cross-origin-opener-policy', 'same-origin')
    .header('cross-origin-resource-policy', 'same-origin')
    .header('cache-control', 'no-cache')
    .header('etag', asset.etag);
  if (request.headers['if-none-match'] === asset.etag) return reply.code(304).send();
  return asset.body;
}

function required(assets: ConsoleAssets, name: string): ConsoleAsset {
  const asset = assets.get(name);
  if (asset) return asset;
  if (!assets.built)
    throw new CodeError('NOT_FOUND', 'the console is not built: run `npm run build` (it writes dist/web)');
  throw new CodeError('NOT_FOUND', `no console file ${name}`, { asset: name });
}

/**
 * The web console: `GET /console` (and `/console/`) serves the page, `GET /console/:asset` its built files
 * (the page names them by absolute path). No authentication: the page signs in itself, and the files hold
 * no data. Every answer carries the strict CSP.
 */
export function registerConsoleRoutes(app: FastifyInstance, ctx: ServerContext, assets: ConsoleAssets = shared): void {
  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/console',
      summary: 'Console page',
      description:
        'The web console (built from web/ by `npm run build`; `/console/` serves it too): sessions, runs, live events and confirmations, signed in with an API token kept in sessionStorage. Served with a strict Content-Security-Policy; it loads nothing from other hosts.',
      scope: null,
      produces: 'text/html',
      responses: { 200: ConsolePageSchema, 404: ErrorBodySchema },
    },
    async ({ request, reply }) => send(request, reply, required(assets, 'index.html')),
  );
  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/console/:asset',
      summary: 'Console file',
      description:
        'A file of the built console: console.js (the bundled page with the typed client), console.css, console.js.map; an empty name (`/console/`) is the page.',
      scope: null,
      params: ConsoleAssetParamsSchema,
      produces: 'text/javascript',
      responses: { 200: ConsoleAssetSchema, 400: ErrorBodySchema, 404: ErrorBodySchema },
    },
    async ({ params, request, reply }) =>
      send(request, reply, required(assets, params.asset === '' ? 'index.html' : params.asset)),
  );
}
