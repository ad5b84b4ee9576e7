/** The one error catalogue: every code the server can answer with, its HTTP status and meaning. */
export const ERROR_CATALOGUE = {
  VALIDATION_ERROR: { status: 400, description: 'A request body, query or message failed its schema.' },
  BAD_REQUEST: {
    status: 400,
    description:
      'The request is not well-formed HTTP (bad URL encoding, an invalid header name or value, a malformed chunked body); nothing was routed.',
  },
  SESSION_CONFIGURATION_ERROR: {
    status: 400,
    description: 'Session options conflict with each other or with the server configuration.',
  },
  UNSUPPORTED_OPTION: { status: 400, description: 'A session option is recognised but not implemented yet.' },
  WEBHOOK_SECRET_MISSING: {
    status: 400,
    description:
      "A run webhook was asked for, but the operator set no webhook secret for the caller's tenant (config webhooks.secrets).",
  },
  WORKSPACE_OUTSIDE_ROOTS: {
    status: 400,
    description: 'The workspace does not resolve inside a configured workspace root.',
  },
  WORKSPACE_NOT_FOUND: {
    status: 404,
    description:
      "The path is not a directory of the caller's tenant space (missing, another tenant's or the shared parent: one answer for all).",
  },
  WORKSPACE_CHANGED: {
    status: 409,
    description:
      "The session's workspace is no longer the directory it was pinned to (swapped for another directory or a symlink, moved, removed); nothing ran. As a tool error: the run goes on.",
  },
  UNAUTHORIZED: { status: 401, description: 'Missing or invalid bearer token.' },
  FORBIDDEN: { status: 403, description: 'The token lacks the scope this route needs.' },
  HOST_NOT_ALLOWED: {
    status: 403,
    description: 'The Host header names no host this server answers to (DNS rebinding guard; see allowed_hosts).',
  },
  ORIGIN_NOT_ALLOWED: {
    status: 403,
    description:
      'A browser request from another origin (Origin not allowed, or Sec-Fetch-Site cross-site/same-site without one; see allowed_origins).',
  },
  NOT_FOUND: { status: 404, description: 'No such route or resource.' },
  METHOD_NOT_ALLOWED: {
    status: 405,
    description: 'The path exists but not for this method; the Allow header lists the methods it has.',
  },
  REQUEST_TIMEOUT: {
    status: 408,
    description:
      'The request headers or body did not arrive within limits.headersTimeoutMs or limits.bodyTimeoutMs; the connection is closed.',
  },
  SESSION_NOT_FOUND: { status: 404, description: 'No such session for this tenant.' },
  RUN_NOT_FOUND: { status: 404, description: 'No such run in this session.' },
  RUN_NOT_ACTIVE: {
    status: 409,
    description:
      "The run is not the session's active run (it ended, or has not started): it cannot be steered or interrupted.",
  },
  TOOL_NOT_FOUND: { status: 404, description: 'No such tool in this session.' },
  AGENT_NOT_FOUND: { status: 404, description: 'No built-in or registered agent has this name.' },
  SKILL_NOT_FOUND: { status: 404, description: 'The session has no skill of this name.' },
  COMMAND_NOT_FOUND: { status: 404, description: 'The session has no registered slash command of this name.' },
  TASK_NOT_FOUND: { status: 404, description: 'The session has no subagent task with this id.' },
  SCHEDULE_NOT_FOUND: { status: 404, description: 'No such schedule for this tenant.' },
  CHECKPOINT_NOT_FOUND: { status: 404, description: 'No loop checkpoint exists for the run.' },
  CONFIRMATION_NOT_FOUND: { status: 404, description: 'No pending confirmation has this tool id.' },
  QUESTION_NOT_FOUND: { status: 404, description: 'No question to the user has this id in this session.' },
  EXTERNAL_TASK_NOT_FOUND: {
    status: 404,
    description:
      "The session's lane queue never handed out an external task with this id (or has forgotten it: it keeps the last 1000 settled ones).",
  },
  CONFIRMATION_SETTLED: { status: 409, description: 'The confirmation was already answered, timed out or cancelled.' },
  QUESTION_SETTLED: { status: 409, description: 'The question was already answered, timed out or cancelled.' },
  EXTERNAL_TASK_SETTLED: {
    status: 409,
    description:
      'The external task was already completed, timed out or cancelled (or runs inside the server on a hybrid lane); details.outcome says which.',
  },
  CONFIRMATION_MISMATCH: { status: 409, description: "The answer names arguments other than the pending call's." },
  SESSION_BUSY: { status: 409, description: 'Another transcript-affecting operation is active on the session.' },
  SCHEDULE_EXISTS: {
    status: 409,
    description: 'The tenant already has a schedule of this name (details.field "name").',
  },
  SESSION_EXISTS: { status: 409, description: 'A live session with this id already exists.' },
  REVERT_CONFLICT: {
    status: 409,
    description:
      'Paths a revert or unrevert would write were changed since the last capture (by a person or another session): `details.paths` lists them; `force: true` writes them anyway.',
  },
  REVERT_UNAVAILABLE: {
    status: 409,
    description:
      "The run's messages cannot be hidden: they were compacted into a summary (or the transcript was rewritten) since, or the run is already reverted.",
  },
  NOTHING_REVERTED: {
    status: 409,
    description:
      'Unrevert with nothing reverted: no revert, an unrevert already done, or a run started after the revert and dropped the reverted messages for good.',
  },
  FORK_POINT_UNAVAILABLE: {
    status: 409,
    description:
      'A fork cannot cut at the run: its start is no longer in the transcript (compacted into a summary, cleared or rewritten since), or it never started.',
  },
  FORK_TREE_UNAVAILABLE: {
    status: 409,
    description:
      'A fork with `workspace: "copy"` has no captured tree for its point: a run on the way has no change set (`details.runId`), nothing was captured yet, change capture is off, or this node\'s shadow store does not hold the tree (captured on another node); `details.reason` says which.',
  },
  CHILD_SESSION: {
    status: 409,
    description:
      'The operation is not available on a child session of a task (it is cancelled, saved and closed with its parent).',
  },
  SESSION_STORE_REQUIRED: { status: 409, description: 'The operation needs a shared session store.' },
  MEMORY_NOT_CONFIGURED: {
    status: 409,
    description: 'The session has no memory store (create it with memoryStore {type: "file" | "memory"}).',
  },
  QUEUE_NOT_CONFIGURED: {
    status: 409,
    description: 'The session has no lane queue (create it with queueConfig {...}).',
  },
  SESSION_CLOSED: { status: 410, description: 'The session was closed.' },
  NODE_LOST: {
    status: 410,
    description:
      'The session lived only in the memory of a node that has died or restarted (it was not saved: no autoSave); nothing of it can be recovered. Create a new session (with autoSave: true to survive a node).',
  },
  SESSION_OWNED_ELSEWHERE: {
    status: 421,
    description:
      'Another live node owns the session and the request asked not to be forwarded (A3S-Route: no-forward), or this node has no cluster.peer_urls to forward with; retry at details.ownerUrl.',
  },
  FORWARDED_INVALID: {
    status: 401,
    description:
      'The request carries an A3S-Forwarded header that is not a fresh, valid signature of a cluster node (forged, replayed, expired, an unknown key id, or past the hop limit).',
  },
  OWNER_UNREACHABLE: {
    status: 502,
    description:
      "The session's owner node did not answer the forwarded request, or its advertised URL matches none of cluster.peer_urls; retry shortly (a dead owner's sessions move once its lease expires).",
  },
  PAYLOAD_TOO_LARGE: {
    status: 413,
    description:
      'The request body exceeds the configured limit (limits.bodyLimitBytes), or one field of it does (a run input over limits.maxInputBytes, session options over limits.maxSessionOptionsBytes; details name the field and the limit).',
  },
  URI_TOO_LONG: {
    status: 414,
    description: 'A path parameter of the URL is longer than the router accepts (512 characters).',
  },
  SNAPSHOT_INVALID: { status: 422, description: 'A stored snapshot failed its schema or has an unsupported version.' },
  NO_CHANGE_SET: {
    status: 422,
    description:
      'No git-compatible change set exists for the run or range: `details.reason` says why (no_mutating_call, commands_refused, too_many_files, capture_failed, tree_missing, unknown) (docs/changes.md).',
  },
  CHANGES_CAPTURING: {
    status: 425,
    description: "The run is still running or its change set is still being captured; retry after the run's agent_end.",
  },
  UPGRADE_REQUIRED: {
    status: 426,
    description: 'The route is a WebSocket endpoint: send the request as a WebSocket upgrade.',
  },
  TOO_MANY_CONNECTIONS: {
    status: 429,
    description:
      'The client address already has limits.maxConnectionsPerAddress open connections (behind a trusted proxy: requests in flight or upgraded sockets); retry after closing some.',
  },
  RUN_QUEUE_FULL: {
    status: 429,
    description:
      "The session's run queue already holds limits.maxQueuedRuns runs (multitaskStrategy enqueue, interrupt or rollback); details name the limit; retry when one has started.",
  },
  QUOTA_EXCEEDED: {
    status: 429,
    description:
      'The tenant is over a quota (tenant_quotas / default_tenant_quota: open sessions, concurrent runs, runs per minute, stored bytes; limits.maxSessionBytesPerTenant: bytes its open sessions hold on the node; uploadBytesInFlight: bytes its attachment uploads hold in memory at once, 4 x limits.maxAttachmentBytes); details name the quota, its limit and the usage, and Retry-After is set where waiting helps.',
  },
  HEADERS_TOO_LARGE: {
    status: 431,
    description:
      "The request line and headers exceed the server's maximum header size (16 KiB): a URL or a header is too long.",
  },
  PERSISTENCE_FAILED: { status: 500, description: 'The session store failed to save a snapshot.' },
  INTERNAL_ERROR: { status: 500, description: 'An unexpected server fault; details are logged, not returned.' },
  SESSION_INITIALIZATION_ERROR: { status: 503, description: 'A resource the session needs could not be initialised.' },
  SHUTTING_DOWN: { status: 503, description: 'The server is draining and admits no new work.' },
  DISK_QUOTA_EXCEEDED: {
    status: 507,
    description:
      "A session's sandboxed commands used more disk than limits.sandboxHomeBytes (its $HOME plus what its commands added to the workspace), or the data directory's or workspace's file system has less free space than limits.minFreeDiskBytes; the command did not start. As a tool error (metadata reason disk_quota_exceeded): the run goes on.",
  },
} as const;

/** A code from the error catalogue. */
export type ErrorCode = keyof typeof ERROR_CATALOGUE;

/**
 * The rest of the catalogue: codes a run fails with (its record's `error.code`, the `error` event, the
 * `agent_end` status), which are no HTTP answer of their own. A waiting client reads them in the run.
 */
export const RUN_ERROR_CATALOGUE = {
  MAX_TOOL_ROUNDS: 'The run reached maxToolRounds.',
  MAX_PARSE_RETRIES: 'The model sent malformed tool arguments more than maxParseRetries times.',
  MAX_EXECUTION_TIME: 'The run exceeded maxExecutionTimeMs.',
  CIRCUIT_BREAKER_OPEN:
    'circuitBreakerThreshold provider calls in a row failed after their retries (or the probe of an open breaker failed); error.status is the last HTTP status.',
  PROVIDER_ERROR:
    'A provider failure that is not retried, came after output started, or outlasted providers.<name>.max_retries; error.status is its HTTP status.',
  BUDGET_EXHAUSTED: 'The budget guard (session, tenant or budget host) denied a provider call.',
  BLOCKED_BY_HOOK: 'A gating hook blocked the prompt or a provider call.',
  CANCELLED: 'The run was cancelled (cancel request, session close or shutdown).',
  NODE_LOST: 'The node running the run died, lost its lease, or the run was in flight when the session was saved.',
  UNKNOWN_COMMAND:
    'The input named a slash command (`/word`) the session does not have; the message lists the known ones.',
  COMMAND_FAILED:
    'A slash command failed: its webhook or WebSocket host timed out, answered an error or a bad answer, or a built-in refused its arguments.',
  TRANSCRIPT_TOO_LARGE:
    'The session transcript is past limits.maxTranscriptBytes or limits.maxTranscriptMessages and could not be compacted (autoCompact off, or the compaction did not happen); no provider call was made.',
  CONTEXT_LIMIT_EXCEEDED:
    "The next provider request's estimated context is past the model's context window (maxContextTokens: limit.context); it was not sent.",
  INTERNAL_ERROR: 'An unexpected fault inside the run.',
} as const;

/** A code a run fails with. */
export type RunErrorCode = keyof typeof RUN_ERROR_CATALOGUE;

/** Every run error code, for schemas. */
export const RUN_ERROR_CODES = Object.keys(RUN_ERROR_CATALOGUE) as [RunErrorCode, ...RunErrorCode[]];

/** A coded error: routes throw it, the error handler maps its code to an HTTP status. */
export class CodeError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.name = 'CodeError';
    this.code = code;
    this.details = details;
  }

  /** HTTP status for this error's code. */
  get status(): number {
    return ERROR_CATALOGUE[this.code].status;
  }
}

/** True when a value is a CodeError (also across module copies). */
export function isCodeError(value: unknown): value is CodeError {
  return value instanceof CodeError;
}
