import type { SessionOptions } from './session-options.js';

const empty = (value: unknown): boolean =>
  Array.isArray(value)
    ? value.length === 0
    : typeof value === 'object' && value !== null && Object.keys(value).length === 0;

/**
 * Options whose capability this server does not build yet, each with the test of whether a value asks for
 * it. A value that asks for nothing (false, 'disabled', an empty list) is accepted and changes nothing; one
 * that asks for something is UNSUPPORTED_OPTION (never silently ignored).
 */
export const UNSUPPORTED_SESSION_OPTIONS: Readonly<
  Record<string, (value: unknown, options: SessionOptions) => boolean>
> = {
  searchConfig: (v) => !empty(v),
  llmApiTimeoutMs: () => true,
  toolResultTransformPolicy: () => true,
  toolPresentationProfile: () => true,
  workspaceBackend: (v) => !empty(v),
  workspaceRetrieval: (v) => !empty(v),
  immutableContentAdapter: (v) => !empty(v),
  remoteGit: (v) => !empty(v),
  outputLanguage: () => true,
  autoDelegation: (v) => (v as { enabled?: boolean }).enabled === true,
  autoParallel: (v) => v === true,
  manualDelegationEnabled: (v) => v === true,
  thinkingBudget: (v) => v !== 0,
  llmLogprobs: (v) => v === true,
  llmTopLogprobs: (v) => v !== 0,
  trajectoryPath: () => true,
  trajectoryMode: () => true,
  trajectoryMaxTextBytes: () => true,
  trajectoryIncludeMessages: (v) => v === true,
  completionWaivers: (v) => !empty(v),
  effectIsolation: (v) => v !== null && v !== false,
  externalObservations: (v) => !empty(v),
  outcomeLedger: (v) => v !== null && v !== false,
  pathRules: (v) => !empty(v),
  planRun: (v) => v !== null && v !== false,
  readOnlySession: (v) => v === true,
  verifierEnabled: (v) => v === true,
  taskPriority: () => true,
  'queueConfig.laneHandlers.control': (v) => (v as { mode?: string }).mode !== 'internal',
  'queueConfig.laneHandlers.generate': (v) => (v as { mode?: string }).mode !== 'internal',
};

const VERIFIED_COMPLETION =
  "the seed's verification-gated completion (waivers, observations, outcome ledger, path rules, plan runs, effect isolation) is not built; run verifications with POST .../verifications";
const TRAJECTORY =
  "trajectory files are not written; the session's event log (GET .../runs/:runId/events) and trace (GET .../trace) record every run";

/** Why each unsupported option is refused (in the error's `details.reasons`); test/protocol/session-options-coverage.test.ts requires one. */
export const UNSUPPORTED_OPTION_REASONS: Readonly<Record<string, string>> = {
  searchConfig: 'web_search is configured by the operator (config web.search), not per session',
  llmApiTimeoutMs:
    "a provider request is bounded by its provider's timeout_ms (config) and the run's maxExecutionTimeMs; a per-session request timeout is not built",
  toolResultTransformPolicy:
    "tool output is capped by the server's limits.toolOutputBytes (head and tail kept, the whole as an artifact); per-session transform policies are not built",
  toolPresentationProfile:
    'every tool is presented to the model directly; adaptive and code presentation are not built',
  workspaceBackend:
    'a workspace is a local directory inside the configured workspace roots; other backends are not built',
  workspaceRetrieval: 'no retrieval index of the workspace is built; the model searches it with grep and glob',
  immutableContentAdapter: 'no content-addressed workspace adapter is built',
  remoteGit: 'remote git workspaces are not built; the workspace is a local directory',
  outputLanguage: 'the answer language is not enforced; ask for it in guidelines or responseStyle',
  autoDelegation: 'automatic delegation is not built; the model delegates with task and parallel_task',
  autoParallel: 'automatic parallel delegation is not built; the model runs children at once with parallel_task',
  manualDelegationEnabled:
    'the delegation tools are always there, governed by the permission policy; a switch for them is not built',
  thinkingBudget: 'reasoning budgets are not sent to providers',
  llmLogprobs: 'log-probabilities are not requested from providers nor reported',
  llmTopLogprobs: 'log-probabilities are not requested from providers nor reported',
  trajectoryPath: TRAJECTORY,
  trajectoryMode: TRAJECTORY,
  trajectoryMaxTextBytes: TRAJECTORY,
  trajectoryIncludeMessages: TRAJECTORY,
  completionWaivers: VERIFIED_COMPLETION,
  effectIsolation: VERIFIED_COMPLETION,
  externalObservations: VERIFIED_COMPLETION,
  outcomeLedger: VERIFIED_COMPLETION,
  pathRules: VERIFIED_COMPLETION,
  planRun: VERIFIED_COMPLETION,
  readOnlySession:
    'not built as a switch; a permissionPolicy denying write, edit, patch and bash (or the read-only agents explore, plan and review) does it',
  verifierEnabled: 'the verifier turn is not built; run verifications with POST .../verifications',
  taskPriority:
    'this server has no Agent-wide task scheduler: every session is admitted at once, so a priority would change nothing',
  'queueConfig.laneHandlers.control':
    'control operations (cancel, confirmation answers, external task completions, lane changes) are the server\'s own and run here: only mode "internal"',
  'queueConfig.laneHandlers.generate':
    'provider requests are made by this server, never handed to the host: only mode "internal" (generateConcurrency bounds them)',
};

/** Each unsupported option's path ("queueConfig.enableDlq" names a field of an option), split once. */
const UNSUPPORTED_PATHS = Object.entries(UNSUPPORTED_SESSION_OPTIONS).map(([name, asks]) => ({
  name,
  path: name.split('.'),
  asks,
}));

/** The options of `options` that ask for a capability this server does not build yet, in option order. */
export function unsupportedOptions(options: SessionOptions): string[] {
  const found: string[] = [];
  for (const { name, path, asks } of UNSUPPORTED_PATHS) {
    let value: unknown = options;
    for (const key of path)
      value = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
    if (value !== undefined && asks(value, options)) found.push(name);
  }
  return found;
}
