import type { RuntimeContext } from '../context.js';

/** What the server plugins and routes receive: the runtime context. */
export type ServerContext = RuntimeContext;
