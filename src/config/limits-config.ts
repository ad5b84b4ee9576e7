import { z } from 'zod';

/** Bounds with documented defaults. */
export const LimitsSchema = z
  .object({
    bodyLimitBytes: z.number().int().positive().default(1_048_576),
    toolOutputBytes: z.number().int().positive().default(102_400),
    agentsMdBytes: z.number().int().positive().default(32_768),
    subscriberBufferEvents: z.number().int().positive().default(1024),
    /** How long a ticket from POST /v1/auth/ticket is accepted on its session's events route (EventSource reconnects reuse it). */
    eventTicketTtlMs: z.number().int().min(100).max(3_600_000).default(60_000),
    /** An SSE subscriber gets a `: ping` comment this often, so proxies and clients see the stream alive. */
    sseHeartbeatMs: z.number().int().min(100).max(600_000).default(15_000),
    maxRuns: z.number().int().positive().default(100),
    maxEventsPerRun: z.number().int().positive().default(10_000),
    maxTraceEvents: z.number().int().nonnegative().default(1000),
    maxSessions: z.number().int().positive().default(100_000),
    maxArtifactsPerSession: z.number().int().positive().default(64),
    maxArtifactBytesPerSession: z.number().int().positive().default(67_108_864),
    /** Bytes of one attachment (upload or inline part); more answers 413 PAYLOAD_TOO_LARGE naming it (docs/attachments.md). */
    maxAttachmentBytes: z.number().int().positive().max(1_073_741_824).default(20_971_520),
    /** Attachments one session may hold; the next one answers 413 PAYLOAD_TOO_LARGE naming it. */
    maxAttachmentsPerSession: z.number().int().positive().max(10_000).default(100),
    /** Terminal subagent tasks a session keeps (with their live child sessions); running ones are never dropped. */
    maxTerminalSubagentTasks: z.number().int().nonnegative().default(100),
    /** A request's line and headers must arrive within this long (else 408); a connection that sends nothing is closed after it too. */
    headersTimeoutMs: z.number().int().min(100).max(600_000).default(10_000),
    /** A request body must arrive within this long after its headers (else 408 REQUEST_TIMEOUT and the connection closed). */
    bodyTimeoutMs: z.number().int().min(100).max(3_600_000).default(10_000),
    /** An idle keep-alive connection is closed after this long (above the 60 s upstream idle timeout of nginx and load balancers). */
    keepAliveTimeoutMs: z.number().int().min(100).max(3_600_000).default(72_000),
    /** Open connections one client address may hold (loopback exempt; behind trust_proxy, the X-Forwarded-For address). */
    maxConnectionsPerAddress: z.number().int().positive().default(1024),
    /** UTF-8 bytes of a run's input (POST .../runs `input`); more answers 413 PAYLOAD_TOO_LARGE naming it. */
    maxInputBytes: z.number().int().positive().default(262_144),
    /** Runs a session's run queue holds (multitaskStrategy enqueue, interrupt, rollback); one more answers 429 RUN_QUEUE_FULL naming it. */
    maxQueuedRuns: z.number().int().positive().max(10_000).default(10),
    /** Schedules a tenant may have (POST /v1/schedules); one more answers 429 QUOTA_EXCEEDED naming it. */
    maxSchedulesPerTenant: z.number().int().positive().max(10_000).default(20),
    /** UTF-8 bytes of a session's options as compact JSON (POST /v1/sessions body, ACP session/new); more answers 413 PAYLOAD_TOO_LARGE naming it. */
    maxSessionOptionsBytes: z.number().int().positive().max(1_073_741_824).default(262_144),
    /**
     * Bytes a tenant's open sessions may hold on this node (options + SESSION_OVERHEAD_BYTES + transcript +
     * artifacts each); past it another session of the tenant is 429 QUOTA_EXCEEDED. Unset: 64 MiB where tenant
     * quotas are on (API tokens, or quotas configured), unbounded on a tokenless server (see sessionBytesLimit).
     */
    maxSessionBytesPerTenant: z.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional(),
    /** A session's transcript bound, UTF-8 bytes of its messages: past it a run compacts first (autoCompact) or fails TRANSCRIPT_TOO_LARGE. */
    maxTranscriptBytes: z.number().int().positive().default(8_388_608),
    /** A session's transcript bound in messages (the same rule as maxTranscriptBytes). */
    maxTranscriptMessages: z.number().int().positive().default(10_000),
    /**
     * Disk one session's sandboxed commands may use: its $HOME plus what its commands added to the workspace, measured
     * after each command; past it the next command is refused (DISK_QUOTA_EXCEEDED). Also the largest file one command may write.
     */
    sandboxHomeBytes: z.number().int().min(1_048_576).default(268_435_456),
    /** Commands are refused (DISK_QUOTA_EXCEEDED) while the data directory's or the workspace's file system has less free space. */
    minFreeDiskBytes: z.number().int().nonnegative().default(1_073_741_824),
    /**
     * Paths change capture leaves out (docs/changes.md): `name/` a directory of that name at any depth, `/path` or
     * `a/b` a path from the workspace root, any other a name at any depth; listed in each change set as not captured.
     */
    changeCaptureExclude: z.array(z.string().min(1).max(256)).max(256).default(['.git/', 'node_modules/']),
    /** Bytes one session's stored change sets may take; past it a change set is kept without its patch (`truncated`). */
    changeStoreBytes: z.number().int().min(1_048_576).default(536_870_912),
  })
  .strict();
