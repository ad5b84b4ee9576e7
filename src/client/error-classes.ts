import { ERROR_CLASSES } from './a3s-error.js';

// One named class per catalogue code (test/client/errors.test.ts checks the list is complete). The classes
// themselves are generated from the catalogues in a3s-error.ts; this file only gives them their import names.

/** The error of code VALIDATION_ERROR. */
export const ValidationError = ERROR_CLASSES.VALIDATION_ERROR;
/** An error of code VALIDATION_ERROR. */
export type ValidationError = InstanceType<typeof ValidationError>;
/** The error of code BAD_REQUEST. */
export const BadRequestError = ERROR_CLASSES.BAD_REQUEST;
/** An error of code BAD_REQUEST. */
export type BadRequestError = InstanceType<typeof BadRequestError>;
/** The error of code SESSION_CONFIGURATION_ERROR. */
export const SessionConfigurationError = ERROR_CLASSES.SESSION_CONFIGURATION_ERROR;
/** An error of code SESSION_CONFIGURATION_ERROR. */
export type SessionConfigurationError = InstanceType<typeof SessionConfigurationError>;
/** The error of code UNSUPPORTED_OPTION. */
export const UnsupportedOptionError = ERROR_CLASSES.UNSUPPORTED_OPTION;
/** An error of code UNSUPPORTED_OPTION. */
export type UnsupportedOptionError = InstanceType<typeof UnsupportedOptionError>;
/** The error of code WEBHOOK_SECRET_MISSING. */
export const WebhookSecretMissingError = ERROR_CLASSES.WEBHOOK_SECRET_MISSING;
/** An error of code WEBHOOK_SECRET_MISSING. */
export type WebhookSecretMissingError = InstanceType<typeof WebhookSecretMissingError>;
/** The error of code WORKSPACE_OUTSIDE_ROOTS. */
export const WorkspaceOutsideRootsError = ERROR_CLASSES.WORKSPACE_OUTSIDE_ROOTS;
/** An error of code WORKSPACE_OUTSIDE_ROOTS. */
export type WorkspaceOutsideRootsError = InstanceType<typeof WorkspaceOutsideRootsError>;
/** The error of code WORKSPACE_CHANGED. */
export const WorkspaceChangedError = ERROR_CLASSES.WORKSPACE_CHANGED;
/** An error of code WORKSPACE_CHANGED. */
export type WorkspaceChangedError = InstanceType<typeof WorkspaceChangedError>;
/** The error of code WORKSPACE_NOT_FOUND. */
export const WorkspaceNotFoundError = ERROR_CLASSES.WORKSPACE_NOT_FOUND;
/** An error of code WORKSPACE_NOT_FOUND. */
export type WorkspaceNotFoundError = InstanceType<typeof WorkspaceNotFoundError>;
/** The error of code UNAUTHORIZED. */
export const UnauthorizedError = ERROR_CLASSES.UNAUTHORIZED;
/** An error of code UNAUTHORIZED. */
export type UnauthorizedError = InstanceType<typeof UnauthorizedError>;
/** The error of code FORBIDDEN. */
export const ForbiddenError = ERROR_CLASSES.FORBIDDEN;
/** An error of code FORBIDDEN. */
export type ForbiddenError = InstanceType<typeof ForbiddenError>;
/** The error of code HOST_NOT_ALLOWED. */
export const HostNotAllowedError = ERROR_CLASSES.HOST_NOT_ALLOWED;
/** An error of code HOST_NOT_ALLOWED. */
export type HostNotAllowedError = InstanceType<typeof HostNotAllowedError>;
/** The error of code ORIGIN_NOT_ALLOWED. */
export const OriginNotAllowedError = ERROR_CLASSES.ORIGIN_NOT_ALLOWED;
/** An error of code ORIGIN_NOT_ALLOWED. */
export type OriginNotAllowedError = InstanceType<typeof OriginNotAllowedError>;
/** The error of code NOT_FOUND. */
export const NotFoundError = ERROR_CLASSES.NOT_FOUND;
/** An error of code NOT_FOUND. */
export type NotFoundError = InstanceType<typeof NotFoundError>;
/** The error of code METHOD_NOT_ALLOWED. */
export const MethodNotAllowedError = ERROR_CLASSES.METHOD_NOT_ALLOWED;
/** An error of code METHOD_NOT_ALLOWED. */
export type MethodNotAllowedError = InstanceType<typeof MethodNotAllowedError>;
/** The error of code REQUEST_TIMEOUT. */
export const RequestTimeoutError = ERROR_CLASSES.REQUEST_TIMEOUT;
/** An error of code REQUEST_TIMEOUT. */
export type RequestTimeoutError = InstanceType<typeof RequestTimeoutError>;
/** The error of code SESSION_NOT_FOUND. */
export const SessionNotFoundError = ERROR_CLASSES.SESSION_NOT_FOUND;
/** An error of code SESSION_NOT_FOUND. */
export type SessionNotFoundError = InstanceType<typeof SessionNotFoundError>;
/** The error of code RUN_NOT_FOUND. */
export const RunNotFoundError = ERROR_CLASSES.RUN_NOT_FOUND;
/** An error of code RUN_NOT_FOUND. */
export type RunNotFoundError = InstanceType<typeof RunNotFoundError>;
/** The error of code TOOL_NOT_FOUND. */
export const ToolNotFoundError = ERROR_CLASSES.TOOL_NOT_FOUND;
/** An error of code TOOL_NOT_FOUND. */
export type ToolNotFoundError = InstanceType<typeof ToolNotFoundError>;
/** The error of code AGENT_NOT_FOUND. */
export const AgentNotFoundError = ERROR_CLASSES.AGENT_NOT_FOUND;
/** An error of code AGENT_NOT_FOUND. */
export type AgentNotFoundError = InstanceType<typeof AgentNotFoundError>;
/** The error of code SKILL_NOT_FOUND. */
export const SkillNotFoundError = ERROR_CLASSES.SKILL_NOT_FOUND;
/** An error of code SKILL_NOT_FOUND. */
export type SkillNotFoundError = InstanceType<typeof SkillNotFoundError>;
/** The error of code COMMAND_NOT_FOUND. */
export const CommandNotFoundError = ERROR_CLASSES.COMMAND_NOT_FOUND;
/** An error of code COMMAND_NOT_FOUND. */
export type CommandNotFoundError = InstanceType<typeof CommandNotFoundError>;
/** The error of code TASK_NOT_FOUND. */
export const TaskNotFoundError = ERROR_CLASSES.TASK_NOT_FOUND;
/** An error of code TASK_NOT_FOUND. */
export type TaskNotFoundError = InstanceType<typeof TaskNotFoundError>;
/** The error of code CHECKPOINT_NOT_FOUND. */
export const CheckpointNotFoundError = ERROR_CLASSES.CHECKPOINT_NOT_FOUND;
/** An error of code CHECKPOINT_NOT_FOUND. */
export type CheckpointNotFoundError = InstanceType<typeof CheckpointNotFoundError>;
/** The error of code CONFIRMATION_NOT_FOUND. */
export const ConfirmationNotFoundError = ERROR_CLASSES.CONFIRMATION_NOT_FOUND;
/** An error of code CONFIRMATION_NOT_FOUND. */
export type ConfirmationNotFoundError = InstanceType<typeof ConfirmationNotFoundError>;
/** The error of code EXTERNAL_TASK_NOT_FOUND. */
export const ExternalTaskNotFoundError = ERROR_CLASSES.EXTERNAL_TASK_NOT_FOUND;
/** An error of code EXTERNAL_TASK_NOT_FOUND. */
export type ExternalTaskNotFoundError = InstanceType<typeof ExternalTaskNotFoundError>;
/** The error of code FORK_POINT_UNAVAILABLE. */
export const ForkPointUnavailableError = ERROR_CLASSES.FORK_POINT_UNAVAILABLE;
/** An error of code FORK_POINT_UNAVAILABLE. */
export type ForkPointUnavailableError = InstanceType<typeof ForkPointUnavailableError>;
/** The error of code FORK_TREE_UNAVAILABLE. */
export const ForkTreeUnavailableError = ERROR_CLASSES.FORK_TREE_UNAVAILABLE;
/** An error of code FORK_TREE_UNAVAILABLE. */
export type ForkTreeUnavailableError = InstanceType<typeof ForkTreeUnavailableError>;
/** The error of code RUN_NOT_ACTIVE. */
export const RunNotActiveError = ERROR_CLASSES.RUN_NOT_ACTIVE;
/** An error of code RUN_NOT_ACTIVE. */
export type RunNotActiveError = InstanceType<typeof RunNotActiveError>;
/** The error of code QUESTION_NOT_FOUND. */
export const QuestionNotFoundError = ERROR_CLASSES.QUESTION_NOT_FOUND;
/** An error of code QUESTION_NOT_FOUND. */
export type QuestionNotFoundError = InstanceType<typeof QuestionNotFoundError>;
/** The error of code QUESTION_SETTLED. */
export const QuestionSettledError = ERROR_CLASSES.QUESTION_SETTLED;
/** An error of code QUESTION_SETTLED. */
export type QuestionSettledError = InstanceType<typeof QuestionSettledError>;
/** The error of code CONFIRMATION_SETTLED. */
export const ConfirmationSettledError = ERROR_CLASSES.CONFIRMATION_SETTLED;
/** An error of code CONFIRMATION_SETTLED. */
export type ConfirmationSettledError = InstanceType<typeof ConfirmationSettledError>;
/** The error of code EXTERNAL_TASK_SETTLED. */
export const ExternalTaskSettledError = ERROR_CLASSES.EXTERNAL_TASK_SETTLED;
/** An error of code EXTERNAL_TASK_SETTLED. */
export type ExternalTaskSettledError = InstanceType<typeof ExternalTaskSettledError>;
/** The error of code CONFIRMATION_MISMATCH. */
export const ConfirmationMismatchError = ERROR_CLASSES.CONFIRMATION_MISMATCH;
/** An error of code CONFIRMATION_MISMATCH. */
export type ConfirmationMismatchError = InstanceType<typeof ConfirmationMismatchError>;
/** The error of code SESSION_BUSY. */
export const SessionBusyError = ERROR_CLASSES.SESSION_BUSY;
/** An error of code SESSION_BUSY. */
export type SessionBusyError = InstanceType<typeof SessionBusyError>;
/** The error of code SCHEDULE_NOT_FOUND. */
export const ScheduleNotFoundError = ERROR_CLASSES.SCHEDULE_NOT_FOUND;
/** An error of code SCHEDULE_NOT_FOUND. */
export type ScheduleNotFoundError = InstanceType<typeof ScheduleNotFoundError>;
/** The error of code SCHEDULE_EXISTS. */
export const ScheduleExistsError = ERROR_CLASSES.SCHEDULE_EXISTS;
/** An error of code SCHEDULE_EXISTS. */
export type ScheduleExistsError = InstanceType<typeof ScheduleExistsError>;
/** The error of code SESSION_EXISTS. */
export const SessionExistsError = ERROR_CLASSES.SESSION_EXISTS;
/** An error of code SESSION_EXISTS. */
export type SessionExistsError = InstanceType<typeof SessionExistsError>;
/** The error of code CHILD_SESSION. */
export const ChildSessionError = ERROR_CLASSES.CHILD_SESSION;
/** An error of code CHILD_SESSION. */
export type ChildSessionError = InstanceType<typeof ChildSessionError>;
/** The error of code SESSION_STORE_REQUIRED. */
export const SessionStoreRequiredError = ERROR_CLASSES.SESSION_STORE_REQUIRED;
/** An error of code SESSION_STORE_REQUIRED. */
export type SessionStoreRequiredError = InstanceType<typeof SessionStoreRequiredError>;
/** The error of code MEMORY_NOT_CONFIGURED. */
export const MemoryNotConfiguredError = ERROR_CLASSES.MEMORY_NOT_CONFIGURED;
/** An error of code MEMORY_NOT_CONFIGURED. */
export type MemoryNotConfiguredError = InstanceType<typeof MemoryNotConfiguredError>;
/** The error of code QUEUE_NOT_CONFIGURED. */
export const QueueNotConfiguredError = ERROR_CLASSES.QUEUE_NOT_CONFIGURED;
/** An error of code QUEUE_NOT_CONFIGURED. */
export type QueueNotConfiguredError = InstanceType<typeof QueueNotConfiguredError>;
/** The error of code SESSION_CLOSED. */
export const SessionClosedError = ERROR_CLASSES.SESSION_CLOSED;
/** An error of code SESSION_CLOSED. */
export type SessionClosedError = InstanceType<typeof SessionClosedError>;
/** The error of code SESSION_OWNED_ELSEWHERE. */
export const SessionOwnedElsewhereError = ERROR_CLASSES.SESSION_OWNED_ELSEWHERE;
/** An error of code SESSION_OWNED_ELSEWHERE. */
export type SessionOwnedElsewhereError = InstanceType<typeof SessionOwnedElsewhereError>;
/** The error of code PAYLOAD_TOO_LARGE. */
export const PayloadTooLargeError = ERROR_CLASSES.PAYLOAD_TOO_LARGE;
/** An error of code PAYLOAD_TOO_LARGE. */
export type PayloadTooLargeError = InstanceType<typeof PayloadTooLargeError>;
/** The error of code URI_TOO_LONG. */
export const UriTooLongError = ERROR_CLASSES.URI_TOO_LONG;
/** An error of code URI_TOO_LONG. */
export type UriTooLongError = InstanceType<typeof UriTooLongError>;
/** The error of code SNAPSHOT_INVALID. */
export const SnapshotInvalidError = ERROR_CLASSES.SNAPSHOT_INVALID;
/** An error of code SNAPSHOT_INVALID. */
export type SnapshotInvalidError = InstanceType<typeof SnapshotInvalidError>;
/** The error of code UPGRADE_REQUIRED. */
export const UpgradeRequiredError = ERROR_CLASSES.UPGRADE_REQUIRED;
/** An error of code UPGRADE_REQUIRED. */
export type UpgradeRequiredError = InstanceType<typeof UpgradeRequiredError>;
/** The error of code TOO_MANY_CONNECTIONS. */
export const TooManyConnectionsError = ERROR_CLASSES.TOO_MANY_CONNECTIONS;
/** An error of code TOO_MANY_CONNECTIONS. */
export type TooManyConnectionsError = InstanceType<typeof TooManyConnectionsError>;
/** The error of code DISK_QUOTA_EXCEEDED. */
export const DiskQuotaExceededError = ERROR_CLASSES.DISK_QUOTA_EXCEEDED;
/** An error of code DISK_QUOTA_EXCEEDED. */
export type DiskQuotaExceededError = InstanceType<typeof DiskQuotaExceededError>;
/** The error of code NO_CHANGE_SET. */
export const NoChangeSetError = ERROR_CLASSES.NO_CHANGE_SET;
/** An error of code NO_CHANGE_SET. */
export type NoChangeSetError = InstanceType<typeof NoChangeSetError>;
/** The error of code REVERT_CONFLICT. */
export const RevertConflictError = ERROR_CLASSES.REVERT_CONFLICT;
/** An error of code REVERT_CONFLICT. */
export type RevertConflictError = InstanceType<typeof RevertConflictError>;
/** The error of code REVERT_UNAVAILABLE. */
export const RevertUnavailableError = ERROR_CLASSES.REVERT_UNAVAILABLE;
/** An error of code REVERT_UNAVAILABLE. */
export type RevertUnavailableError = InstanceType<typeof RevertUnavailableError>;
/** The error of code NOTHING_REVERTED. */
export const NothingRevertedError = ERROR_CLASSES.NOTHING_REVERTED;
/** An error of code NOTHING_REVERTED. */
export type NothingRevertedError = InstanceType<typeof NothingRevertedError>;
/** The error of code CHANGES_CAPTURING. */
export const ChangesCapturingError = ERROR_CLASSES.CHANGES_CAPTURING;
/** An error of code CHANGES_CAPTURING. */
export type ChangesCapturingError = InstanceType<typeof ChangesCapturingError>;
/** The error of code RUN_QUEUE_FULL. */
export const RunQueueFullError = ERROR_CLASSES.RUN_QUEUE_FULL;
/** An error of code RUN_QUEUE_FULL. */
export type RunQueueFullError = InstanceType<typeof RunQueueFullError>;
/** The error of code QUOTA_EXCEEDED. */
export const QuotaExceededError = ERROR_CLASSES.QUOTA_EXCEEDED;
/** An error of code QUOTA_EXCEEDED. */
export type QuotaExceededError = InstanceType<typeof QuotaExceededError>;
/** The error of code HEADERS_TOO_LARGE. */
export const HeadersTooLargeError = ERROR_CLASSES.HEADERS_TOO_LARGE;
/** An error of code HEADERS_TOO_LARGE. */
export type HeadersTooLargeError = InstanceType<typeof HeadersTooLargeError>;
/** The error of code PERSISTENCE_FAILED. */
export const PersistenceFailedError = ERROR_CLASSES.PERSISTENCE_FAILED;
/** An error of code PERSISTENCE_FAILED. */
export type PersistenceFailedError = InstanceType<typeof PersistenceFailedError>;
/** The error of code INTERNAL_ERROR. */
export const InternalError = ERROR_CLASSES.INTERNAL_ERROR;
/** An error of code INTERNAL_ERROR. */
export type InternalError = InstanceType<typeof InternalError>;
/** The error of code SESSION_INITIALIZATION_ERROR. */
export const SessionInitializationError = ERROR_CLASSES.SESSION_INITIALIZATION_ERROR;
/** An error of code SESSION_INITIALIZATION_ERROR. */
export type SessionInitializationError = InstanceType<typeof SessionInitializationError>;
/** The error of code SHUTTING_DOWN. */
export const ShuttingDownError = ERROR_CLASSES.SHUTTING_DOWN;
/** An error of code SHUTTING_DOWN. */
export type ShuttingDownError = InstanceType<typeof ShuttingDownError>;
/** The error of code MAX_TOOL_ROUNDS. */
export const MaxToolRoundsError = ERROR_CLASSES.MAX_TOOL_ROUNDS;
/** An error of code MAX_TOOL_ROUNDS. */
export type MaxToolRoundsError = InstanceType<typeof MaxToolRoundsError>;
/** The error of code MAX_PARSE_RETRIES. */
export const MaxParseRetriesError = ERROR_CLASSES.MAX_PARSE_RETRIES;
/** An error of code MAX_PARSE_RETRIES. */
export type MaxParseRetriesError = InstanceType<typeof MaxParseRetriesError>;
/** The error of code MAX_EXECUTION_TIME. */
export const MaxExecutionTimeError = ERROR_CLASSES.MAX_EXECUTION_TIME;
/** An error of code MAX_EXECUTION_TIME. */
export type MaxExecutionTimeError = InstanceType<typeof MaxExecutionTimeError>;
/** The error of code CIRCUIT_BREAKER_OPEN. */
export const CircuitBreakerOpenError = ERROR_CLASSES.CIRCUIT_BREAKER_OPEN;
/** An error of code CIRCUIT_BREAKER_OPEN. */
export type CircuitBreakerOpenError = InstanceType<typeof CircuitBreakerOpenError>;
/** The error of code PROVIDER_ERROR. */
export const ProviderError = ERROR_CLASSES.PROVIDER_ERROR;
/** An error of code PROVIDER_ERROR. */
export type ProviderError = InstanceType<typeof ProviderError>;
/** The error of code BUDGET_EXHAUSTED. */
export const BudgetExhaustedError = ERROR_CLASSES.BUDGET_EXHAUSTED;
/** An error of code BUDGET_EXHAUSTED. */
export type BudgetExhaustedError = InstanceType<typeof BudgetExhaustedError>;
/** The error of code BLOCKED_BY_HOOK. */
export const BlockedByHookError = ERROR_CLASSES.BLOCKED_BY_HOOK;
/** An error of code BLOCKED_BY_HOOK. */
export type BlockedByHookError = InstanceType<typeof BlockedByHookError>;
/** The error of code CANCELLED. */
export const CancelledError = ERROR_CLASSES.CANCELLED;
/** An error of code CANCELLED. */
export type CancelledError = InstanceType<typeof CancelledError>;
/** The error of code NODE_LOST. */
export const NodeLostError = ERROR_CLASSES.NODE_LOST;
/** An error of code NODE_LOST. */
export type NodeLostError = InstanceType<typeof NodeLostError>;
/** The error of code UNKNOWN_COMMAND. */
export const UnknownCommandError = ERROR_CLASSES.UNKNOWN_COMMAND;
/** An error of code UNKNOWN_COMMAND. */
export type UnknownCommandError = InstanceType<typeof UnknownCommandError>;
/** The error of code COMMAND_FAILED. */
export const CommandFailedError = ERROR_CLASSES.COMMAND_FAILED;
/** An error of code COMMAND_FAILED. */
export type CommandFailedError = InstanceType<typeof CommandFailedError>;
/** The error of code TRANSCRIPT_TOO_LARGE. */
export const TranscriptTooLargeError = ERROR_CLASSES.TRANSCRIPT_TOO_LARGE;
/** An error of code TRANSCRIPT_TOO_LARGE. */
export type TranscriptTooLargeError = InstanceType<typeof TranscriptTooLargeError>;
/** The error of code CONTEXT_LIMIT_EXCEEDED. */
export const ContextLimitExceededError = ERROR_CLASSES.CONTEXT_LIMIT_EXCEEDED;
/** An error of code CONTEXT_LIMIT_EXCEEDED. */
export type ContextLimitExceededError = InstanceType<typeof ContextLimitExceededError>;
/** The error of code NETWORK_ERROR. */
export const NetworkError = ERROR_CLASSES.NETWORK_ERROR;
/** An error of code NETWORK_ERROR. */
export type NetworkError = InstanceType<typeof NetworkError>;
/** The error of code PROTOCOL_ERROR. */
export const ProtocolError = ERROR_CLASSES.PROTOCOL_ERROR;
/** An error of code PROTOCOL_ERROR. */
export type ProtocolError = InstanceType<typeof ProtocolError>;
/** The error of code TOOL_ERROR. */
export const ToolError = ERROR_CLASSES.TOOL_ERROR;
/** An error of code TOOL_ERROR. */
export type ToolError = InstanceType<typeof ToolError>;
/** The error of code FORWARDED_INVALID. */
export const ForwardedInvalidError = ERROR_CLASSES.FORWARDED_INVALID;
/** An error of code FORWARDED_INVALID. */
export type ForwardedInvalidError = InstanceType<typeof ForwardedInvalidError>;
/** The error of code OWNER_UNREACHABLE. */
export const OwnerUnreachableError = ERROR_CLASSES.OWNER_UNREACHABLE;
/** An error of code OWNER_UNREACHABLE. */
export type OwnerUnreachableError = InstanceType<typeof OwnerUnreachableError>;
