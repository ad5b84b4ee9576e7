import { WebSocket } from 'ws';
import { A3sClient } from '../client/index.js';
import type { CliConfig } from './cli-config.js';

/** A client for the configured server (Node has no global WebSocket before 22: the `ws` package's is passed). */
export function connect(config: CliConfig): A3sClient {
  return new A3sClient({
    baseUrl: config.url,
    ...(config.token !== undefined ? { token: config.token } : {}),
    route: config.route,
    WebSocket,
  });
}
