import type { z } from 'zod';
import type { ChatMessage } from '../protocol/chat-message.js';
import type { CompactResponse } from '../protocol/compaction.js';
import type { EventEnvelope } from '../protocol/event-envelope.js';
import type { SessionInfoSchema } from '../protocol/http.js';
import type { AgentResult, RunRecord, RunStatus } from '../protocol/run-record.js';
import type { EventStream } from './event-stream.js';
import { seg } from './http-transport.js';
import { falseOn, sessionPath, type SessionContext } from './session-context.js';
import { SessionAttachments } from './session-attachments.js';
import { SessionHost } from './session-host.js';
import { SessionMemory } from './session-memory.js';
import { SessionWorkers } from './session-workers.js';
import { SessionQuestions } from './session-questions.js';
import { SessionRunControl } from './session-run-control.js';
import { SessionQueue } from './session-queue.js';
import {
  SessionRuns,
  type EventsOptions,
  type RunEventsPage,
  type RunFinished,
  type RunOptions,
  type RunStarted,
  type SessionRequest,
  type StreamOptions,
} from './session-runs.js';
import { SessionTools, type ToolArgs, type ToolResult } from './session-tools.js';

/** Session info as the server answers it. */
export type SessionInfo = z.infer<typeof SessionInfoSchema>;

/**
 * A session of the server, with the seed's Node SDK method names. Identity (`sessionId`, `workspace`,
 * `tenantId`, `principal`, `agentTemplateId`, `correlationId`) and the seed's getters `initWarning` and
 * `hasMemory` are plain properties (fixed at creation); `isClosed()` answers at once, from this handle; every
 * other method talks to the server and returns a Promise. Failures reject with the A3sError subclass of their code.
 */
export class Session {
  readonly sessionId: string;
  readonly workspace: string;
  readonly tenantId: string | undefined;
  readonly principal: string | undefined;
  readonly agentTemplateId: string | undefined;
  readonly correlationId: string | undefined;
  /** The session info of the create / resume / get answer (`info()` fetches it again). */
  readonly created: SessionInfo;
  /** True when the server resumed a stored session instead of creating one. */
  readonly resumed: boolean;
  /** Non-fatal notes about the options the session was built with, null when none (the seed's `initWarning` getter). */
  readonly initWarning: string | null;
  /** True when a memory store resolved (the seed's `hasMemory` getter). */
  readonly hasMemory: boolean;
  private closedHere: boolean;
  private readonly ctx: SessionContext;
  private readonly runCalls: SessionRuns;
  private readonly tools: SessionTools;
  private readonly memory: SessionMemory;
  private readonly queue: SessionQueue;
  private readonly questions: SessionQuestions;
  private readonly control: SessionRunControl;
  private readonly attachments: SessionAttachments;
  private readonly host: SessionHost;

  constructor(ctx: Omit<SessionContext, 'sessionId'>, info: SessionInfo, resumed = false) {
    this.ctx = { ...ctx, sessionId: info.id };
    this.sessionId = info.id;
    this.workspace = info.workspace;
    this.tenantId = info.labels.tenantId;
    this.principal = info.labels.principal;
    this.agentTemplateId = info.labels.agentTemplateId;
    this.correlationId = info.labels.correlationId;
    this.created = info;
    this.resumed = resumed;
    this.initWarning = info.initWarning;
    this.hasMemory = info.hasMemory;
    this.closedHere = info.closed;
    this.runCalls = new SessionRuns(this.ctx);
    this.tools = new SessionTools(this.ctx);
    this.memory = new SessionMemory(this.ctx);
    this.queue = new SessionQueue(this.ctx);
    this.questions = new SessionQuestions(this.ctx);
    this.control = new SessionRunControl(this.ctx);
    this.attachments = new SessionAttachments(this.ctx);
    this.host = new SessionHost(this.ctx);
  }

  private path(suffix = ''): string {
    return sessionPath(this.ctx, suffix);
  }

  // Conversation and runs

  /**
   * Run a prompt to its end and answer the AgentResult. With `history`, a side question that leaves the
   * transcript unchanged. A failed or cancelled run rejects with its run error (e.g. CancelledError,
   * BudgetExhaustedError; details: runId, run, result).
   */
  send(prompt: string, history?: ChatMessage[], options: RunOptions = {}): Promise<AgentResult> {
    return this.runCalls.send(prompt, history, options);
  }

  /** The seed's alias of send. */
  run(prompt: string, history?: ChatMessage[], options: RunOptions = {}): Promise<AgentResult> {
    return this.runCalls.send(prompt, history, options);
  }

  /** The seed's object form of send: `{prompt, history?, attachments?}` (attachments as sendWithAttachments takes them). */
  sendRequest(request: SessionRequest, options: RunOptions = {}): Promise<AgentResult> {
    return this.runCalls.sendRequest(request, options);
  }

  /** The seed's object form of stream: `{prompt, history?, attachments?}`. */
  streamRequest(request: SessionRequest, options: StreamOptions = {}): Promise<EventStream> {
    return this.runCalls.streamRequest(request, options);
  }

  /** The seed's sendWithAttachments(prompt, attachments, history?): send with images and text files (AttachmentInput). */
  sendWithAttachments: SessionRuns['sendWithAttachments'] = (prompt, attachments, history, options) =>
    this.runCalls.sendWithAttachments(prompt, attachments, history, options);
  /** The seed's streamWithAttachments(prompt, attachments, history?): stream with attachments, like stream. */
  streamWithAttachments: SessionRuns['streamWithAttachments'] = (prompt, attachments, history, options) =>
    this.runCalls.streamWithAttachments(prompt, attachments, history, options);
  /** Upload the raw bytes of an image or text file: its reference `{attachmentId, type, mediaType, name?, bytes, sha256}`. */
  uploadAttachment: SessionAttachments['uploadAttachment'] = (bytes, options) =>
    this.attachments.uploadAttachment(bytes, options);
  /** The session's uploaded attachments (references). */
  listAttachments: SessionAttachments['listAttachments'] = () => this.attachments.listAttachments();

  /** POST .../runs as is: 202 RunStarted, or with `wait: true` the RunFinished answer (a failed run resolves too). */
  startRun(
    input: string,
    options: RunOptions & { history?: ChatMessage[]; wait?: boolean } = {},
  ): Promise<RunStarted | RunFinished> {
    return this.runCalls.startRun(input, options);
  }

  /**
   * Start a run and stream its events from its first one until its `agent_end`: the run is started, the
   * session_sequence of its first event read from its event page, and the WebSocket opened just before it,
   * so no event of the run is missed however fast it is. The stream reconnects by itself (see SocketEventStream).
   */
  stream(prompt: string, history?: ChatMessage[], options: StreamOptions = {}): Promise<EventStream> {
    return this.runCalls.stream(prompt, history, options);
  }

  /** The session's events from a cursor: followed live over the WebSocket (default), or the retained ones page by page (`follow: false`). */
  events(options: EventsOptions = {}): EventStream {
    return this.runCalls.events(options);
  }

  /** The transcript's messages. */
  async history(): Promise<ChatMessage[]> {
    return (await this.ctx.transport.get<{ messages: ChatMessage[] }>(this.path('/history'))).messages;
  }

  /** Cancel the active run: false when nothing runs. */
  async cancel(): Promise<boolean> {
    return (await this.ctx.transport.post<{ cancelled: boolean }>(this.path('/cancel'))).cancelled;
  }

  /** The seed's non-blocking cancel (the same call here). */
  cancelAsync(): Promise<boolean> {
    return this.cancel();
  }

  /**
   * Cancel the active run and wait until the session is idle again (the seed's cancelAndSettle): true once it
   * settled, false when nothing ran or it was still busy after `graceMs + abortGraceMs` (the server's run stops at
   * its next safe point; the client cannot abort it harder).
   */
  cancelAndSettle(graceMs = 2000, abortGraceMs = 1000): Promise<boolean> {
    return this.runCalls.cancelAndSettle(graceMs, abortGraceMs);
  }

  /** Cancel a run if it is the active one: false when it is not. */
  async cancelRun(runId: string): Promise<boolean> {
    return (await this.ctx.transport.post<{ cancelled: boolean }>(this.path(`/runs/${seg(runId)}/cancel`))).cancelled;
  }

  /** Run records, oldest first. */
  async runs(): Promise<RunRecord[]> {
    return (await this.ctx.transport.get<{ runs: RunRecord[] }>(this.path('/runs'))).runs;
  }

  /** One run record. */
  async runSnapshot(runId: string): Promise<RunRecord> {
    return (await this.ctx.transport.get<{ run: RunRecord }>(this.path(`/runs/${seg(runId)}`))).run;
  }

  /**
   * A page of a run's events (per-run `sequence` > after) with the seed's fields (`hasMore`,
   * `latestSequenceExclusive`, `firstAvailableSequence`, `nextAfterSequence`): the seed's positional
   * `runEventPage(runId, afterSequence?, limit?)`, or `{after, limit}`.
   */
  runEventPage(
    runId: string,
    afterOrOptions: number | null | { after?: number; limit?: number } = {},
    limit?: number,
  ): Promise<RunEventsPage> {
    return this.runCalls.runEventPage(runId, afterOrOptions, limit);
  }

  /** Every retained event of a run, page after page (`limit` bounds the total). */
  runEvents(runId: string, options: { after?: number; limit?: number } = {}): Promise<EventEnvelope[]> {
    return this.runCalls.runEvents(runId, options);
  }

  /** The active run `{id, status}`, null when idle. */
  async currentRun(): Promise<{ id: string; status: RunStatus } | null> {
    return (await this.info()).currentRun;
  }

  /** Resume a run from its loop checkpoint: the new run (202), or with `{wait: true}` its AgentResult. */
  resumeRun(runId: string, options?: RunOptions & { wait?: false }): Promise<RunStarted>;
  resumeRun(runId: string, options: RunOptions & { wait: true }): Promise<AgentResult | null>;
  resumeRun(runId: string, options: RunOptions & { wait?: boolean } = {}): Promise<RunStarted | AgentResult | null> {
    return this.runCalls.resumeRun(runId, options);
  }

  /** The session's trace events (its retained event log) after a session_sequence. */
  async traceEvents(options: { after?: number; limit?: number } = {}): Promise<EventEnvelope[]> {
    return (
      await this.ctx.transport.get<{ events: EventEnvelope[] }>(this.path('/trace'), {
        after: options.after,
        limit: options.limit,
      })
    ).events;
  }

  /** Compact the conversation now (the seed's /compact). */
  compact(): Promise<CompactResponse> {
    return this.ctx.transport.post<CompactResponse>(this.path('/compact'));
  }

  // Lifecycle

  /** The session's info now. */
  async info(): Promise<SessionInfo> {
    return (await this.ctx.transport.get<{ session: SessionInfo }>(this.path())).session;
  }

  /** Save one snapshot generation; answers its number. */
  async save(): Promise<number> {
    return (await this.ctx.transport.post<{ generation: number }>(this.path('/save'))).generation;
  }

  /** True once this handle closed the session, or when it was closed as this handle was made (`info().closed` asks the server). */
  isClosed(): boolean {
    return this.closedHere;
  }

  /** The seed's non-blocking close (the same call here). */
  closeAsync(): Promise<boolean> {
    return this.close();
  }

  /** Close the session (and this client's host socket): true when it was open, false when already closed or unknown. */
  async close(): Promise<boolean> {
    this.host.disconnect();
    this.closedHere = true;
    const answer = await falseOn(['SESSION_NOT_FOUND'], () =>
      this.ctx.transport.delete<{ closed: boolean }>(this.path()),
    );
    return answer !== false && answer.closed;
  }

  // Tools (SessionTools)

  /** Host-direct tool call. */
  tool: SessionTools['tool'] = (name, args) => this.tools.tool(name, args);
  /** Governed direct tool call. */
  governedTool: SessionTools['governedTool'] = (name, args) => this.tools.governedTool(name, args);
  /** Tool names. */
  toolNames: SessionTools['toolNames'] = () => this.tools.toolNames();
  /** Tool definitions. */
  toolDefinitions: SessionTools['toolDefinitions'] = () => this.tools.toolDefinitions();
  /** Read a file. */
  readFile: SessionTools['readFile'] = (path, options) => this.tools.readFile(path, options);
  /** Write a file. */
  writeFile: SessionTools['writeFile'] = (path, content, options) => this.tools.writeFile(path, content, options);
  /** List a directory. */
  ls: SessionTools['ls'] = (path, options) => this.tools.ls(path, options);
  /** Edit a file. */
  editFile: SessionTools['editFile'] = (path, oldString, newString, options) =>
    this.tools.editFile(path, oldString, newString, options);
  /** Patch a file. */
  patchFile: SessionTools['patchFile'] = (path, diff) => this.tools.patchFile(path, diff);
  /** Glob: string[]. */
  glob: SessionTools['glob'] = (pattern, options) => this.tools.glob(pattern, options);
  /** Grep. */
  grep: SessionTools['grep'] = (pattern, options) => this.tools.grep(pattern, options);
  /** Bash. */
  bash: SessionTools['bash'] = (command, options) => this.tools.bash(command, options);
  /** Git. */
  git: SessionTools['git'] = (command, ...rest) => this.tools.git(command, ...rest);
  /** QuickJS program. */
  program: SessionTools['program'] = (body) => this.tools.program(body);
  /** One subagent task. */
  task: SessionTools['task'] = (spec) => this.tools.task(spec);
  /** The seed's alias of task. */
  delegateTask: SessionTools['task'] = (spec) => this.tools.task(spec);
  /** Parallel subagent tasks. */
  tasks: SessionTools['tasks'] = (specs, options) => this.tools.tasks(specs, options);
  /** The seed's object-shaped git: `gitCommand({command: 'status'})`. */
  gitCommand = (args: { command: string } & ToolArgs): Promise<ToolResult> => this.tools.tool('git', args);
  /** The `web_search` tool host-direct (`{query, engines?, limit?, timeout?, ...}` as the tool takes them). */
  webSearch = (params: { query: string } & ToolArgs): Promise<ToolResult> => this.tools.tool('web_search', params);

  /** The full output of a truncated tool result, null when the session does not hold it (any more). */
  getArtifact: SessionTools['getArtifact'] = (artifactId) => this.tools.getArtifact(artifactId);
  /** The session's subagent task snapshots. */
  subagentTasks: SessionTools['subagentTasks'] = () => this.tools.subagentTasks();
  /** One subagent task snapshot (TaskNotFoundError for an unknown id). */
  subagentTask: SessionTools['subagentTask'] = (taskId) => this.tools.subagentTask(taskId);
  /** The subagent tasks still queued or running. */
  pendingSubagentTasks: SessionTools['pendingSubagentTasks'] = () => this.tools.pendingSubagentTasks();
  /** Cancel a queued or running subagent task (boolean). */
  cancelSubagentTask: SessionTools['cancelSubagentTask'] = (taskId) => this.tools.cancelSubagentTask(taskId);

  // Memory, skills, agents, MCP (SessionMemory)

  /** Remember a success. */
  rememberSuccess: SessionMemory['rememberSuccess'] = (task, tools, result) =>
    this.memory.rememberSuccess(task, tools, result);
  /** Remember a failure. */
  rememberFailure: SessionMemory['rememberFailure'] = (task, error, tools) =>
    this.memory.rememberFailure(task, error, tools);
  /** Recent memories. */
  memoryRecent: SessionMemory['memoryRecent'] = (limit) => this.memory.memoryRecent(limit);
  /** Similar memories. */
  recallSimilar: SessionMemory['recallSimilar'] = (query, limit) => this.memory.recallSimilar(query, limit);
  /** Memories by tags. */
  recallByTags: SessionMemory['recallByTags'] = (tags, limit) => this.memory.recallByTags(tags, limit);
  /** Memory stats. */
  memoryStats: SessionMemory['memoryStats'] = () => this.memory.memoryStats();
  /** The working tier. */
  getWorking: SessionMemory['getWorking'] = () => this.memory.getWorking();
  /** Empty the working tier. */
  clearWorking: SessionMemory['clearWorking'] = () => this.memory.clearWorking();
  /** The short-term ring. */
  getShortTerm: SessionMemory['getShortTerm'] = () => this.memory.getShortTerm();
  /** Empty the short-term ring. */
  clearShortTerm: SessionMemory['clearShortTerm'] = () => this.memory.clearShortTerm();
  /** Add a skill. */
  addSkill: SessionMemory['addSkill'] = (skill) => this.memory.addSkill(skill);
  /** Remove a skill (boolean). */
  removeSkill: SessionMemory['removeSkill'] = (name) => this.memory.removeSkill(name);
  /** Skill names. */
  skillNames: SessionMemory['skillNames'] = () => this.memory.skillNames();
  /** Skills. */
  skills: SessionMemory['skills'] = () => this.memory.skills();
  /** Register an agent directory. */
  registerAgentDir: SessionMemory['registerAgentDir'] = (path) => this.memory.registerAgentDir(path);
  /** Register a worker agent: the AgentDefinition it compiled to. */
  registerWorkerAgent: SessionWorkers['registerWorkerAgent'] = (spec) =>
    new SessionWorkers(this.ctx).registerWorkerAgent(spec);
  /** Register worker agents (all or none): their AgentDefinitions in order. */
  registerWorkerAgents: SessionWorkers['registerWorkerAgents'] = (specs) =>
    new SessionWorkers(this.ctx).registerWorkerAgents(specs);
  /** Agents. */
  agents: SessionMemory['agents'] = () => this.memory.agents();
  /** Add an MCP server (tool count). */
  addMcp: SessionMemory['addMcp'] = (config) => this.memory.addMcp(config);
  /** MCP servers. */
  mcps: SessionMemory['mcps'] = () => this.memory.mcps();
  /** Remove an MCP server (boolean). */
  removeMcp: SessionMemory['removeMcp'] = (name) => this.memory.removeMcp(name);
  /** The seed's typed-object add (tool count): the same as addMcp. */
  addMcpServerConfig: SessionMemory['addMcp'] = (config) => this.memory.addMcp(config);
  /** The seed's positional add (tool count). */
  addMcpServer: SessionMemory['addMcpServer'] = (...args) => this.memory.addMcpServer(...args);
  /** The seed's remove (void; NotFoundError for a server that is not the session's own). */
  removeMcpServer: SessionMemory['removeMcpServer'] = (name) => this.memory.removeMcpServer(name);
  /** The seed's MCP status list: the same as mcps. */
  mcpStatus: SessionMemory['mcps'] = () => this.memory.mcps();

  // Queue, confirmations, verification (SessionQueue)

  /** Has a lane queue. */
  hasQueue: SessionQueue['hasQueue'] = () => this.queue.hasQueue();
  /** Queue stats. */
  queueStats: SessionQueue['queueStats'] = () => this.queue.queueStats();
  /** Queue metrics. */
  queueMetrics: SessionQueue['queueMetrics'] = () => this.queue.queueMetrics();
  /** Dead letters. */
  deadLetters: SessionQueue['deadLetters'] = () => this.queue.deadLetters();
  /** Set a lane handler. */
  setLaneHandler: SessionQueue['setLaneHandler'] = (lane, config) => this.queue.setLaneHandler(lane, config);
  /** Pending external tasks. */
  pendingExternalTasks: SessionQueue['pendingExternalTasks'] = () => this.queue.pendingExternalTasks();
  /** Complete an external task (boolean). */
  completeExternalTask: SessionQueue['completeExternalTask'] = (taskId, answer) =>
    this.queue.completeExternalTask(taskId, answer);
  /** Pending confirmations. */
  pendingConfirmations: SessionQueue['pendingConfirmations'] = () => this.queue.pendingConfirmations();
  /** Queue input for the active run's next safe point (the seed's steer): its receipt. */
  steer: SessionRunControl['steer'] = (input, options) => this.control.steer(input, options);
  /** Stop the active run at its next safe point, or now with `force` (the seed's interrupt): its receipt. */
  interrupt: SessionRunControl['interrupt'] = (options) => this.control.interrupt(options);
  /** The active run's next turn id and revision (the seed's runControlSnapshot). */
  runControlSnapshot: SessionRunControl['runControlSnapshot'] = (runId) => this.control.runControlSnapshot(runId);
  /** Questions the agent asked the user (ask_user) and waits on. */
  pendingQuestions: SessionQuestions['pendingQuestions'] = () => this.questions.pendingQuestions();
  /** Answer a question of the agent: a string is free text, `{option}` one of its options. */
  answerQuestion: SessionQuestions['answerQuestion'] = (questionId, reply) =>
    this.questions.answerQuestion(questionId, reply);
  /** Reject every pending confirmation: the number cancelled (the seed's cancelConfirmations). */
  cancelConfirmations: SessionQueue['cancelConfirmations'] = () => this.queue.cancelConfirmations();
  /** Answer a confirmation. */
  confirmToolUse: SessionQueue['confirmToolUse'] = (toolId, approved, reason, options) =>
    this.queue.confirmToolUse(toolId, approved, reason, options);
  /** Run verification commands. */
  verifyCommands: SessionQueue['verifyCommands'] = (subjectOrRequest, commands) =>
    this.queue.verifyCommands(subjectOrRequest, commands);
  /** Verification reports. */
  verificationReports: SessionQueue['verificationReports'] = () => this.queue.verificationReports();
  /** Keep reports produced elsewhere (void). */
  recordVerificationReports: SessionQueue['recordVerificationReports'] = (reports) =>
    this.queue.recordVerificationReports(reports);
  /** Verification summary. */
  verificationSummary: SessionQueue['verificationSummary'] = () => this.queue.verificationSummary();
  /** Verification summary text. */
  verificationSummaryText: SessionQueue['verificationSummaryText'] = () => this.queue.verificationSummaryText();
  /** Verification presets. */
  verificationPresets: SessionQueue['verificationPresets'] = () => this.queue.verificationPresets();

  // Callbacks: the client as the session's WebSocket host (SessionHost)

  /** Register a hook with a JS handler. */
  registerHook: SessionHost['registerHook'] = (id, event, matcher, options, handler) =>
    this.host.registerHook(id, event, matcher, options, handler);
  /** Remove a hook (boolean). */
  unregisterHook: SessionHost['unregisterHook'] = (id) => this.host.unregisterHook(id);
  /** Registered hooks. */
  hooks: SessionHost['hooksList'] = () => this.host.hooksList();
  /** Number of hooks of the session. */
  hookCount = async (): Promise<number> => (await this.host.hooksList()).length;
  /** Register a slash command (JS handler, template or webhook). */
  registerCommand: SessionHost['registerCommand'] = (name, description, handler, options) =>
    this.host.registerCommand(name, description, handler, options);
  /** Remove a command (boolean). */
  unregisterCommand: SessionHost['unregisterCommand'] = (name) => this.host.unregisterCommand(name);
  /** Slash commands. */
  listCommands: SessionHost['listCommands'] = () => this.host.listCommands();
  /** Set (or with null remove) the JS budget guard. */
  setBudgetGuard: SessionHost['setBudgetGuard'] = (guard) => this.host.setBudgetGuard(guard);
  /** Close this client's host socket (registrations naming it then fail closed on the server). */
  disconnectHost = (): void => this.host.disconnect();
}
