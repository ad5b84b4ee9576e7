// The public API of the typed client (`a3s-code-server/client`). Browser-safe: fetch and WebSocket only.
export {
  A3sClient,
  type A3sClientOptions,
  type ForkOptions,
  type Health,
  type RevertOptions,
  type SessionOptionsInput,
} from './a3s-client.js';
export { Session, type SessionInfo } from './session.js';
export {
  ScheduleClient,
  type ScheduleInput,
  type ScheduleTriggerResult,
  type ScheduleUpdate,
} from './schedule-client.js';
export type { Schedule, ScheduleTick } from '../protocol/schedules.js';
export type {
  EventsOptions,
  RunEventsPage,
  RunFinished,
  RunOptions,
  RunStarted,
  SessionRequest,
  StreamOptions,
} from './session-runs.js';
export { EventStream } from './event-stream.js';
export {
  SocketEventStream,
  eventsSocketUrl,
  type ReconnectOptions,
  type ReplayGap,
  type SocketEventStreamOptions,
} from './socket-event-stream.js';
export { PagedEventStream } from './paged-event-stream.js';
export {
  toAgentEvent,
  type AgentEvent,
  type AgentEventFields,
  type AgentEventInput,
  type ReplayGapEvent,
} from './agent-event.js';
export {
  A3sError,
  CLIENT_ERROR_CATALOGUE,
  ERROR_CLASSES,
  errorClassFor,
  errorClassName,
  isA3sError,
  toA3sError,
  type A3sErrorClass,
  type A3sErrorCode,
  type ClientErrorCode,
} from './a3s-error.js';
export * from './error-classes.js';
export { HttpTransport, errorFromAnswer, type RequestOptions, type TransportOptions } from './http-transport.js';
export type { ToolArgs, ToolDefinition, ToolResult, TaskSpec, TasksOptions } from './session-tools.js';
export type { AgentDirRegistered } from './session-memory.js';
export type { ConfirmOptions, LaneStats } from './session-queue.js';
export type { QuestionReply } from './session-questions.js';
export {
  bytesToBase64,
  type AttachmentBytes,
  type AttachmentInput,
  type UploadOptions,
} from './session-attachments.js';
export type { AttachmentRef, RunAttachment } from '../protocol/attachments.js';
export type { InterruptOptions, SteerOptions } from './session-run-control.js';
export type { HostReconnectInfo, HostReconnectOptions } from './host-reconnect.js';
export type {
  BudgetDecision,
  BudgetGuard,
  CommandHandler,
  CommandOptions,
  CommandSpec,
  HookHandler,
  HookHandlerResult,
  HookOptions,
} from './host-registrations.js';
export type { WebSocketConstructor, WebSocketLike } from './websocket-like.js';
export { agentEventTypesV1, eventEnvelopeV1Version } from '../protocol/event-catalog.js';
export type { AgentResult, RunRecord, RunStatus } from '../protocol/run-record.js';
export type { ChangeRange, ChangeSet, ChangedFile, NotCaptured } from '../protocol/change-set.js';
export type { RunWebhook, WebhookBody, WebhookDelivery, WebhookEvent } from '../protocol/webhooks.js';
export type { RevertResponse, RevertedFile, RevertedRuns } from '../protocol/revert.js';
export type { MultitaskStrategy } from '../protocol/multitask-strategy.js';
export type { ChatMessage } from '../protocol/chat-message.js';
export type { WorkerAgentDefinition, WorkerAgentSpecInput } from '../protocol/worker-agents.js';
export type { EventEnvelope } from '../protocol/event-envelope.js';
export type {
  AgentEventEnvelope,
  KnownEvent,
  UnknownEvent,
  UnknownEventType,
} from '../protocol/agent-event-envelope.js';
