import type { Lane } from '../../protocol/queue.js';

/** The seed's lanes with their priority (0 = highest), in priority order. */
export const LANE_PRIORITY: Readonly<Record<Lane, number>> = { control: 0, query: 1, execute: 2, generate: 3 };

/** The lanes in priority order. */
export const LANES: readonly Lane[] = ['control', 'query', 'execute', 'generate'];

/** The seed's default concurrency of each lane. */
export const DEFAULT_LANE_CONCURRENCY: Readonly<Record<Lane, number>> = {
  control: 2,
  query: 4,
  execute: 2,
  generate: 1,
};

/** The seed's default lane handler timeout (ms). */
export const DEFAULT_LANE_TIMEOUT_MS = 60_000;

/** Tools the seed maps to the query lane (`from_tool_name`); every other tool goes to execute. */
const QUERY_TOOLS: ReadonlySet<string> = new Set([
  'read',
  'glob',
  'ls',
  'grep',
  'list_files',
  'search',
  'web_fetch',
  'web_search',
]);

/** The lane a tool call goes through, by tool name (the seed's mapping). */
export function laneForTool(name: string): Lane {
  return QUERY_TOOLS.has(name) ? 'query' : 'execute';
}

/** The lane as the seed spells it in `external_task_pending` (its PascalCase enum). */
export function seedLaneName(lane: Lane): string {
  return lane.charAt(0).toUpperCase() + lane.slice(1);
}
