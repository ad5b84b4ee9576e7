import type { RuntimeEventPayloads, RuntimeEventType } from '../../protocol/runtime-event.js';
import type {
  ConfirmationInheritance,
  ParallelTaskParams,
  SkillCallParams,
  SubagentTaskSnapshot,
  TaskParams,
} from '../../protocol/subagent-task.js';
import type { AgentDefinition } from '../agent-definitions/agent-definition.js';
import type { AgentRegistry } from '../agent-definitions/agent-registry.js';
import type { HostEnv } from '../ports/host-env.js';
import type { SessionEmit, SessionEventObserver } from '../session-kernel/session-emitter.js';
import type { SkillDefinition } from '../skills/skill-definition.js';
import type { SkillRegistry } from '../skills/skill-registry.js';
import { tellSkillHooks } from '../skills/skill-hooks.js';
import type { ToolResult } from '../tools/define-tool.js';
import type { Delegation, DelegationCall } from '../tools/define-tool.js';
import type { ChildParent, ChildSpawner, ChildSpec } from './child-session.js';
import { linkAbort } from '../signals/link-abort.js';
import { cutTaskOutput, structuredPrompt } from './task-output.js';
import { outcomeOf, parallelResult, taskFailure, taskResult } from './task-result.js';
import type { SubagentTasks } from './subagent-tasks.js';
import type { ReleaseSlot, TaskSlots } from './task-slots.js';

/** Delegation bounds (config `delegation`). */
export interface DelegationLimits {
  /** Nesting depth a child may reach (a task inside a task inside ...); deeper ones are refused. */
  readonly maxDepth: number;
  /** A session's parallel_task children running at once when its options set no maxParallelTasks (config max_parallel_tasks, default 8). */
  readonly maxParallel: number;
}

/** What a session's delegation needs from the session and the agent. */
export interface SessionDelegationDeps {
  readonly sessionId: string;
  readonly depth: number;
  readonly limits: DelegationLimits;
  /** How children of the model's calls answer asks (config; a host-direct call may choose its own). */
  readonly inheritance: ConfirmationInheritance;
  readonly hostEnv: HostEnv;
  readonly emit: SessionEmit;
  /** The parent's active run: a task's later events belong to the run that started it only while it runs. */
  activeRunId(): string | undefined;
  readonly agents: AgentRegistry;
  readonly skills: SkillRegistry;
  readonly tasks: SubagentTasks;
  /** The session's maxParallelTasks slots, shared by the children of all its parallel_task calls and host `tasks` requests. */
  readonly slots: TaskSlots;
  readonly parent: ChildParent;
  /** Builds child sessions; absent in a session built without an agent (embedders): delegation answers that it is off. */
  readonly spawner: ChildSpawner | undefined;
  storeArtifact(content: string, toolCallId: string, toolName: string): string | undefined;
}

/** What one child is asked to do. */
interface ChildJob {
  readonly spec: Omit<ChildSpec, 'observe'>;
  readonly description: string;
  readonly prompt: string;
  readonly outputSchema?: Record<string, unknown> | undefined;
  readonly background: boolean;
}

/**
 * A session's child runs for `task`, `parallel_task` and `Skill`: each child is a real child session with
 * its own run (its own InvocationContext, governed by its own tool invoker), linked to the delegating call's
 * signal, spending the parent's budget, and reported on the parent's stream with subagent_start,
 * subagent_progress and subagent_end.
 */
export class SessionDelegation implements Delegation {
  private resolved: SessionDelegationDeps | undefined;

  /** `wire` is called on first use: a session that never delegates keeps no delegation state. */
  constructor(private readonly wire: () => SessionDelegationDeps) {}

  private get deps(): SessionDelegationDeps {
    this.resolved ??= this.wire();
    return this.resolved;
  }

  async task(params: TaskParams, call: DelegationCall): Promise<ToolResult> {
    const refused = this.refusal();
    if (refused) return refused;
    const agent = this.agent(params.agent, 'agent');
    if ('output' in agent) return agent;
    const job = this.job(params, agent, call.inheritance);
    if (params.background) return this.background(job, call);
    const task = await this.runChild(job, call.signal, call);
    return taskResult(task, 'task', call.toolCallId, this.deps);
  }

  async parallelTask(params: ParallelTaskParams, call: DelegationCall): Promise<ToolResult> {
    const refused = this.refusal();
    if (refused) return refused;
    const jobs: ChildJob[] = [];
    for (const [index, item] of params.tasks.entries()) {
      const agent = this.agent(item.agent, `tasks.${index}.agent`);
      if ('output' in agent) return agent;
      // Inside parallel_task every item is waited for (background applies to a single task).
      jobs.push({ ...this.job(item, agent, call.inheritance), background: false });
    }
    const controller = new AbortController();
    const unlink = linkAbort(call.signal, controller);
    const timer =
      params.timeout_ms === undefined
        ? undefined
        : setTimeout(
            () => controller.abort(new Error(`parallel_task timeout_ms ${params.timeout_ms} elapsed`)),
            params.timeout_ms,
          );
    let results: SubagentTaskSnapshot[];
    try {
      // Every child asks for a slot now, in item order; those beyond the session's bound wait queued.
      results = await Promise.all(
        jobs.map((job) => this.runChild(job, controller.signal, call, undefined, this.deps.slots)),
      );
    } finally {
      clearTimeout(timer);
      unlink();
    }
    return parallelResult(params, results, call.toolCallId, this.deps);
  }

  async skill(params: SkillCallParams, call: DelegationCall): Promise<ToolResult> {
    const refused = this.refusal();
    if (refused) return refused;
    const skill = this.deps.skills.get(params.skill_name);
    if (!skill) {
      const known = this.deps.skills.discoverable().map((s) => s.name);
      return taskFailure(
        `skill_name: this session has no skill named "${params.skill_name}"${known.length ? ` (known: ${known.join(', ')})` : ''}; find one with search_skills`,
        { code: 'SKILL_NOT_FOUND' },
      );
    }
    const why = skillRefusal(skill);
    if (why) return taskFailure(`skill_name: skill "${skill.name}" ${why}`, { code: 'SKILL_NOT_INVOCABLE' });
    const general = this.deps.agents.require('general');
    const prompt = params.prompt?.trim() ? params.prompt : `Apply the '${skill.name}' skill to the task at hand.`;
    // skill_load when the skill is activated for this call, skill_unload when its run is over.
    const hooks = this.deps.parent.governanceParts().governance.hooks;
    const sessionId = this.deps.sessionId;
    tellSkillHooks(hooks, 'skill_load', sessionId, skill, 'skill_tool', { tool_id: call.toolCallId });
    const task = await this.runChild(
      {
        spec: { kind: 'skill', agent: general, skill, inheritance: call.inheritance ?? this.deps.inheritance },
        description: `skill ${skill.name}`,
        prompt,
        background: false,
      },
      call.signal,
      call,
    );
    tellSkillHooks(hooks, 'skill_unload', sessionId, skill, 'skill_tool', {
      tool_id: call.toolCallId,
      status: task.status,
    });
    return taskResult(task, 'Skill', call.toolCallId, this.deps);
  }

  /** Why this session may not delegate now, as a tool error; undefined when it may. */
  private refusal(): ToolResult | undefined {
    if (!this.deps.spawner)
      return taskFailure('delegation is not available in this session (no child sessions can be built here)');
    const { depth, limits } = this.deps;
    if (depth >= limits.maxDepth) {
      return taskFailure(
        `delegation depth limit reached: this session is a child at depth ${depth}, and delegation.max_depth is ${limits.maxDepth}; do the work yourself instead of delegating it`,
        { code: 'DELEGATION_DEPTH', depth, max_depth: limits.maxDepth },
      );
    }
    return undefined;
  }

  private agent(name: string, field: string): AgentDefinition | ToolResult {
    const agent = this.deps.agents.get(name);
    if (agent) return agent;
    // Hidden workers are delegated to by name, never advertised.
    return taskFailure(
      `${field}: no agent named "${name}" (known: ${this.deps.agents
        .list()
        .filter((a) => a.hidden !== true)
        .map((a) => a.name)
        .join(', ')})`,
      { code: 'AGENT_NOT_FOUND', agent: name },
    );
  }

  private job(params: TaskParams, agent: AgentDefinition, inheritance: ConfirmationInheritance | undefined): ChildJob {
    return {
      spec: {
        kind: 'task',
        agent,
        ...(params.max_steps !== undefined ? { maxSteps: params.max_steps } : {}),
        // A host call's own choice, else the worker's, else the operator's default.
        inheritance: inheritance ?? agent.confirmationInheritance ?? this.deps.inheritance,
      },
      description: params.description,
      prompt: params.prompt,
      outputSchema: params.output_schema,
      background: params.background === true,
    };
  }

  /** Start a task in the background: the call returns its id at once; the run's cancel or the session's close stops it. */
  private async background(job: ChildJob, call: DelegationCall): Promise<ToolResult> {
    // Resolves when the child's run started (or, when it could not start, with the failed task).
    const task = await new Promise<SubagentTaskSnapshot>(
      (resolve) => void this.runChild(job, call.runSignal, call, resolve).then(resolve),
    );
    if (task.status !== 'running') return taskResult(task, 'task', call.toolCallId, this.deps);
    const output = `Task ${task.task_id} started in the background (agent ${task.agent}, child session ${task.session_id}). Its result comes as a subagent_end event and from GET /v1/sessions/${this.deps.sessionId}/tasks/${task.task_id}.`;
    return {
      output,
      exitCode: 0,
      metadata: {
        task_id: task.task_id,
        session_id: task.session_id,
        agent: task.agent,
        background: true,
        status: 'running',
      },
    };
  }

  /**
   * Run one child to its end: wait for one of `slots` when given (the task is `queued` meanwhile), build the
   * child session, start its run linked to `signal`, report it on the parent's stream and record its task.
   * Never throws: a child that cannot be built is a failed task, one cancelled while queued a cancelled one.
   */
  private async runChild(
    job: ChildJob,
    signal: AbortSignal,
    call: DelegationCall,
    onStarted?: (task: SubagentTaskSnapshot) => void,
    slots?: TaskSlots,
  ): Promise<SubagentTaskSnapshot> {
    const { hostEnv, tasks } = this.deps;
    const taskId = hostEnv.newId('task');
    // A host-direct call's context carries its call id as runId: only an active run of the parent is a parent run.
    const parentRunId = call.runId !== undefined && call.runId === this.deps.activeRunId() ? call.runId : undefined;
    const controller = new AbortController();
    const unlink = linkAbort(signal, controller);
    const base: SubagentTaskSnapshot = {
      task_id: taskId,
      parent_session_id: this.deps.sessionId,
      session_id: taskId,
      agent: job.spec.agent.name,
      description: job.description,
      prompt: job.prompt,
      kind: job.spec.kind,
      background: job.background,
      status: slots !== undefined && !slots.free ? 'queued' : 'running',
      parent_run_id: parentRunId ?? null,
      run_id: null,
      started_ms: hostEnv.now(),
      finished_ms: null,
      output: null,
      success: null,
      error: null,
      usage: null,
    };
    tasks.add(base, controller);
    let release: ReleaseSlot | undefined;
    try {
      if (slots) {
        release = await slots.acquire(controller.signal).catch(() => undefined);
        if (!release) {
          return this.end(taskId, job, {
            status: 'cancelled',
            output: null,
            error: {
              code: 'CANCELLED',
              message: 'the task was cancelled while it waited for a slot (maxParallelTasks)',
            },
          });
        }
        tasks.start(taskId);
      }
      const child = await this.deps.spawner!.spawn(this.deps.parent, {
        ...job.spec,
        observe: this.observer(taskId, parentRunId),
      });
      if (controller.signal.aborted) {
        await child.close();
        return this.end(taskId, job, {
          status: 'cancelled',
          output: null,
          error: { code: 'CANCELLED', message: 'the task was cancelled before its child started' },
        });
      }
      const run = child.run(
        job.outputSchema ? `${job.prompt}\n\n${structuredPrompt(job.outputSchema)}` : job.prompt,
        controller.signal,
      );
      tasks.attach(taskId, child, run.runId);
      this.emitFor(parentRunId, 'subagent_start', {
        task_id: taskId,
        session_id: child.id,
        parent_session_id: this.deps.sessionId,
        agent: base.agent,
        description: job.description,
        started_ms: tasks.require(taskId).started_ms,
      });
      onStarted?.(tasks.require(taskId));
      const record = await run.done;
      return this.end(taskId, job, outcomeOf(record, job.outputSchema));
    } catch (error) {
      return this.end(taskId, job, {
        status: 'failed',
        output: null,
        error: {
          code: 'INTERNAL_ERROR',
          message: `the child session could not be started: ${error instanceof Error ? error.message : String(error)}`,
        },
      });
    } finally {
      release?.();
      unlink();
    }
  }

  /** Emit on the parent's stream, in the delegating run while it is still active (else on the session). */
  private emitFor<T extends RuntimeEventType>(
    runId: string | undefined,
    type: T,
    payload: RuntimeEventPayloads[T],
  ): void {
    this.deps.emit(runId !== undefined && runId === this.deps.activeRunId() ? runId : undefined, type, payload);
  }

  /** Record how a task ended; subagent_end follows a subagent_start only (a child that never started has neither). */
  private end(taskId: string, job: ChildJob, outcome: Parameters<SubagentTasks['finish']>[1]): SubagentTaskSnapshot {
    const task = this.deps.tasks.finish(taskId, outcome) ?? this.deps.tasks.require(taskId);
    if (task.run_id === null) return task;
    const output = task.output ?? task.error?.message ?? '';
    this.emitFor(task.parent_run_id ?? undefined, 'subagent_end', {
      task_id: taskId,
      session_id: task.session_id,
      agent: job.spec.agent.name,
      output: cutTaskOutput(output).text,
      success: task.success === true,
      finished_ms: task.finished_ms ?? this.deps.hostEnv.now(),
    });
    return task;
  }

  /** What the parent learns of a child's events: progress after each tool call, and (inherit_parent) its asks. */
  private observer(taskId: string, parentRunId: string | undefined): SessionEventObserver {
    let toolCalls = 0;
    return (type, payload) => {
      if (type === 'tool_end') {
        toolCalls += 1;
        const end = payload as { name: string; exit_code: number };
        const task = this.deps.tasks.require(taskId);
        this.emitFor(parentRunId, 'subagent_progress', {
          task_id: taskId,
          session_id: task.session_id,
          status: 'running',
          metadata: { tool_name: end.name, exit_code: end.exit_code, tool_calls: toolCalls },
        });
      } else if (
        type === 'confirmation_required' ||
        type === 'confirmation_received' ||
        type === 'confirmation_timeout'
      ) {
        // The child asks through the parent's broker: the parent's subscribers see the ask and answer it there.
        this.emitFor(parentRunId, type, payload as never);
      }
    };
  }
}

/** Why a skill may not be run with `Skill`, or undefined when it may. */
function skillRefusal(skill: SkillDefinition): string | undefined {
  if (skill.disableModelInvocation) return 'has disable-model-invocation: true and cannot be run with Skill';
  if (skill.kind === 'persona') return 'is a persona skill (it fills the role slot) and cannot be run with Skill';
  return undefined;
}
