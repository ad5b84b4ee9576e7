import { sessionPath, type SessionContext } from './session-context.js';
import { SessionMemory } from './session-memory.js';
import { SessionQuestions } from './session-questions.js';
import { SessionQueue } from './session-queue.js';
import { SessionRunControl } from './session-run-control.js';
import { SessionTools, type ToolArgs, type ToolResult } from './session-tools.js';
import { SessionWorkers } from './session-workers.js';

/**
 * The part of a Session that hands each call to one of its parts: tools, memory and skills, agents and MCP, the
 * lane queue, confirmations and verification, run control and questions (Session extends it; split out to keep
 * each file small).
 */
export class SessionDelegates {
  protected readonly ctx: SessionContext;
  private readonly tools: SessionTools;
  private readonly memory: SessionMemory;
  private readonly queue: SessionQueue;
  private readonly questions: SessionQuestions;
  private readonly control: SessionRunControl;

  constructor(ctx: SessionContext) {
    this.ctx = ctx;
    this.tools = new SessionTools(ctx);
    this.memory = new SessionMemory(ctx);
    this.queue = new SessionQueue(ctx);
    this.questions = new SessionQuestions(ctx);
    this.control = new SessionRunControl(ctx);
  }

  /** `/v1/sessions/:id` plus a suffix. */
  protected path(suffix = ''): string {
    return sessionPath(this.ctx, suffix);
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
}
