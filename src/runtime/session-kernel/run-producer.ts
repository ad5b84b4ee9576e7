import type { AttachmentRef } from '../../protocol/attachments.js';
import type { WorkspaceLease } from '../workspace/workspace-directory.js';
import type { ChatMessage } from '../../protocol/chat-message.js';
import type { AgentResult, RunRecord } from '../../protocol/run-record.js';
import type { LoopCheckpoint } from '../../protocol/loop-checkpoint.js';
import { buildVerificationSummary } from '../../protocol/verification-summary.js';
import type { RunCheckpoints } from '../../stores/checkpoint-store.js';
import type { HostEnv } from '../ports/host-env.js';
import type { InvocationContext } from '../invocation/invocation-context.js';
import type { AgentMemory } from '../memory/agent-memory.js';
import { NOTHING_RECALLED, recallContext, recordCompletedRun } from '../memory/memory-context.js';
import { fromCheckpoint } from '../loop/checkpoint-codec.js';
import { runLoop, type LoopDeps, type LoopState, type RunOutcome } from '../loop/run-loop.js';
import type { SafePointStop } from '../loop/safe-point-stop.js';
import type { PlanProgress } from '../../protocol/planning.js';
import { runWithPlanning, type PlannedRunDeps } from '../planning/run-with-planning.js';
import { toAgentResult } from './agent-result.js';
import { contextProviders, resolvedContext } from './run-context.js';
import type { ResolvedSessionConfig } from './resolved-session-config.js';
import type { SessionEmit } from './session-emitter.js';
import type { SessionGovernanceParts } from './session-governance-factory.js';
import type { SessionRuns } from './session-runs.js';
import type { SessionTranscript } from './session-transcript.js';
import type { VerificationReports } from './verification-reports.js';
import { runCapabilityBound } from '../evidence/evidence-binding.js';
import type { SessionChanges } from '../changes/session-changes.js';
import type { Telemetry, TraceParent } from '../ports/telemetry.js';
import { runSpan } from './run-span.js';
import { rollBackFiles } from '../changes/roll-back-files.js';
import { agentEndPayload, failedOutcome, runResultPayload } from './run-end-payloads.js';
import { saveRunCheckpoint } from './save-run-checkpoint.js';

/** The parts of a run request the producer reads. */
export interface ProducedRunRequest {
  input: string;
  /** Side question: run on this history instead of the transcript. */
  history?: ChatMessage[];
  /** Resume from this loop checkpoint. */
  resumeFrom?: LoopCheckpoint;
  /** Set by SessionRunControl.stopAtSafePoint: the loop stops before its next provider call. */
  safePoint?: SafePointStop;
  /** Set by a rollback (multitaskStrategy rollback): the run leaves the transcript as it found it. */
  rollback?: { byRunId: string | undefined };
  /** The user message's attachments (references; the bytes are read when each provider request is built). */
  attachments?: AttachmentRef[];
  /** The span of the request that started the run (traces on). */
  traceParent?: TraceParent;
}

/** What a run's producer needs from its session. */
export interface RunProducerHost {
  readonly config: ResolvedSessionConfig;
  readonly hostEnv: HostEnv;
  /** Where loop checkpoints go after every tool round. */
  readonly checkpoints: RunCheckpoints;
  readonly emit: SessionEmit;
  readonly runs: SessionRuns;
  readonly transcript: SessionTranscript;
  readonly verifications: VerificationReports;
  /** The session's memory (SessionOptions.memoryStore): recalled into each run's context, told of each completed run. */
  readonly memory?: AgentMemory | undefined;
  /** The session's governance (built on first use). */
  governance(): SessionGovernanceParts;
  /** The services the loop drives: the session's LLM and tool invokers and the model's tool specs. */
  loopDeps(): Omit<LoopDeps, 'checkpoint'>;
  /** True when a stopped run keeps its checkpoints (shutdown, passivation, a lost lease): it can be resumed. */
  keepsCheckpoints(): boolean;
  /** The save after a run ends (autoSave sessions that are still this node's); failures are reported, never thrown. */
  saveAfterRun(): Promise<void>;
  /** The session's change capture (absent: none). */
  readonly changes?: SessionChanges | undefined;
  /** Traces (absent: none): the run gets a span, its provider and tool calls children of it. */
  readonly telemetry?: Telemetry | undefined;
}

/**
 * Produce one admitted run: pre_prompt hooks, the loop (from the transcript, a side question's history or a
 * checkpoint), checkpoint cleanup, the run's preset reports, then transcript, usage, result, status,
 * agent_end and the autosave. Never throws: a loop failure becomes a failed run.
 */
export async function produceRun(
  host: RunProducerHost,
  record: RunRecord,
  request: ProducedRunRequest,
  ctx: InvocationContext,
  signal: AbortSignal,
): Promise<RunRecord> {
  // The run holds the workspace descriptor from start to end: its calls work on the pinned directory even if the
  // name is swapped meanwhile. A workspace already changed is not held; each call then reports WORKSPACE_CHANGED.
  let lease: WorkspaceLease | undefined;
  try {
    lease = host.config.workspaceDir.acquire();
  } catch {
    lease = undefined;
  }
  const span = host.telemetry === undefined ? undefined : runSpan(host.telemetry, host.config, record, request);
  try {
    // Traced: the run's span is the active one while it runs, so its Redis round trips and commands find it.
    const produced = span
      ? await span.within(() => produceHeldRun(host, record, request, { ...ctx, trace: span }, signal))
      : await produceHeldRun(host, record, request, ctx, signal);
    span?.setAttributes({ 'a3s.run.status': produced.status, 'a3s.run.tool_calls': produced.result?.toolCallsCount });
    span?.setContent({ 'a3s.run.output': produced.result?.text });
    if (produced.status === 'failed') span?.fail(produced.error?.code ?? 'failed');
    return produced;
  } finally {
    lease?.release();
    span?.end();
  }
}

async function produceHeldRun(
  host: RunProducerHost,
  record: RunRecord,
  request: ProducedRunRequest,
  ctx: InvocationContext,
  signal: AbortSignal,
): Promise<RunRecord> {
  const { config, emit } = host;
  const sessionId = config.sessionId;
  // Where a fork at this run cuts: the committed transcript as the run found it (a resumed run continues one
  // whose rounds were never committed, so it finds the same).
  record.transcriptStart = host.transcript.messages.length;
  record.transcriptEpoch = host.transcript.epoch;
  host.changes?.openRun(record.runId);
  emit(record.runId, 'agent_start', {
    prompt: request.input,
    model: config.model.id,
    side_question: record.sideQuestion,
  });
  // A session run as an agent announces it at every run start (agent_start -> agent_mode_changed, the seed's order).
  if (config.agentDefinition)
    emit(record.runId, 'agent_mode_changed', {
      mode: config.agentDefinition.mode,
      agent: config.agentDefinition.name,
      description: config.agentDefinition.description,
    });
  host.runs.setStatus(record, 'executing');
  const { governance, budget } = host.governance();
  const hooks = governance.hooks;
  budget.startClock?.();
  let input = request.input;
  let outcome: RunOutcome | undefined;
  // The loop's working transcript at its end (system message first): what the session keeps, compacted or not.
  let working: ChatMessage[] | undefined;
  // pre_prompt hooks may block the run or rewrite the input (fail closed, like every gating hook).
  const gate = hooks?.wants('pre_prompt')
    ? await hooks.gate(
        'pre_prompt',
        { session_id: sessionId, run_id: record.runId, prompt: input, labels: config.labels },
        { sessionId },
        signal,
      )
    : undefined;
  if (gate && gate.action !== 'continue') {
    outcome = failedOutcome(
      'BLOCKED_BY_HOOK',
      `the prompt was ${gate.action === 'block' ? 'blocked' : 'skipped'} by pre_prompt hook${gate.hookId ? ` ${gate.hookId}` : ''}${gate.reason ? `: ${gate.reason}` : ''}`,
    );
  } else if (gate?.modifiedPayload && typeof gate.modifiedPayload.prompt === 'string') {
    input = gate.modifiedPayload.prompt;
  }
  const userMessage: ChatMessage =
    request.attachments !== undefined && request.attachments.length > 0
      ? { role: 'user', content: input, attachments: request.attachments }
      : { role: 'user', content: input };
  const resume = request.resumeFrom;
  // A resumed run starts from the checkpoint's working transcript: [system, ...history, user, ...rounds].
  const before = resume ? resume.messages.slice(1) : [...(request.history ?? host.transcript.messages), userMessage];
  if (!outcome) {
    if (resume) emit(record.runId, 'run_resumed', { from_run_id: resume.run_id, turn: resume.turn });
    // The run's context: the AGENTS.md chain and skill catalog (in the system prompt since the session's build)
    // and the memory context provider's recall (a store failure recalls nothing); hooks hear of it only when hooked.
    const providers = contextProviders(config, host.memory !== undefined);
    emit(record.runId, 'context_resolving', { providers: providers as string[] });
    const perceived =
      hooks !== undefined && (hooks.wants('pre_context_perception') || hooks.wants('post_context_perception'));
    const perceivedAt = perceived ? host.hostEnv.now() : 0;
    if (perceived && hooks.wants('pre_context_perception'))
      hooks.observe(
        'pre_context_perception',
        { session_id: sessionId, run_id: record.runId, prompt: input, providers, labels: config.labels },
        { sessionId },
      );
    const recalled = host.memory
      ? await recallContext(host.memory, input).catch(() => NOTHING_RECALLED)
      : NOTHING_RECALLED;
    const resolved = resolvedContext(config, recalled);
    emit(record.runId, 'context_resolved', resolved);
    if (perceived && hooks.wants('post_context_perception'))
      hooks.observe(
        'post_context_perception',
        {
          session_id: sessionId,
          run_id: record.runId,
          providers,
          ...resolved,
          duration_ms: Math.max(0, host.hostEnv.now() - perceivedAt),
          labels: config.labels,
        },
        { sessionId },
      );
    const section = recalled.section;
    const transcript: ChatMessage[] = [
      { role: 'system', content: section ? `${config.systemPrompt}\n\n${section}` : config.systemPrompt },
      ...before,
    ];
    const deps: LoopDeps = {
      ...host.loopDeps(),
      checkpoint: (state: LoopState, plan?: PlanProgress) =>
        saveRunCheckpoint(host, record, input, state, plan, ctx.trace?.traceparent),
      ...(request.safePoint ? { safePoint: request.safePoint } : {}),
    };
    emit(
      record.runId,
      'run_capability_bound',
      runCapabilityBound(config.model.id, deps.toolSpecs(), ctx.governance, resume?.turn ?? 0),
    );
    // Planning and goal tracking are for the session's own runs (a side question answers plainly).
    const planned = !record.sideQuestion && (config.planningMode !== 'disabled' || config.goalTracking);
    try {
      const ended =
        planned || resume?.plan
          ? await runWithPlanning(
              plannedRunDeps(host, record, deps),
              ctx,
              transcript,
              input,
              resume ? { state: fromCheckpoint(resume), ...(resume.plan ? { plan: resume.plan } : {}) } : undefined,
            )
          : await runLoop(deps, ctx, transcript, resume ? fromCheckpoint(resume) : undefined);
      outcome = ended;
      // A run refused by the transcript or context bound before its first turn leaves the transcript as it was.
      const refused =
        (ended.error?.code === 'TRANSCRIPT_TOO_LARGE' || ended.error?.code === 'CONTEXT_LIMIT_EXCEEDED') &&
        ended.added.length === 0 &&
        ended.messages.length === transcript.length;
      working = refused ? [transcript[0]!, ...host.transcript.messages] : ended.messages;
    } catch (error) {
      outcome = failedOutcome('INTERNAL_ERROR', error instanceof Error ? error.message : String(error));
    }
    // A run stopped by server shutdown keeps its checkpoint: another process (or node) can resume it.
    if (!host.keepsCheckpoints()) {
      await host.checkpoints.delete(record.runId).catch(() => undefined);
      // The resumed run's own checkpoints replaced the one it started from.
      if (resume) await host.checkpoints.delete(resume.run_id).catch(() => undefined);
    }
  }
  budget.stopClock?.();
  await host.verifications.settleRun();
  // The run's result tree and change set, before its end is recorded: a GET after `wait: true` finds it.
  const captured = await host.changes?.finishRun(record.runId, outcome.status);
  if (captured && captured.changeSet.files.length > 0) {
    const { changeSet } = captured;
    emit(record.runId, 'run_changes_captured', {
      run_id: record.runId,
      files: changeSet.files.length,
      patch_bytes: changeSet.patch_bytes,
      patch_digest: changeSet.patch_digest,
    });
  }
  if (outcome.status === 'failed' && outcome.error && hooks?.wants('on_error')) {
    hooks.observe(
      'on_error',
      {
        session_id: sessionId,
        run_id: record.runId,
        error_type: outcome.error.code,
        error_message: outcome.error.message,
        labels: config.labels,
      },
      { sessionId },
    );
  }
  // A rolled-back run's files go back to its base before its end is recorded (the next run starts after it).
  const rollbackBy = request.rollback?.byRunId;
  if (rollbackBy !== undefined) {
    const files = await rollBackFiles(host.changes, record.runId, captured);
    record.metadata = { ...record.metadata, rolled_back_files: files };
    emit(record.runId, 'run_files_rolled_back', { by_run_id: rollbackBy, ...files });
  }
  if (host.memory && outcome.status === 'completed')
    await recordCompletedRun(host.memory, input, outcome.added, outcome.text).catch(() => undefined);
  // A rolled-back run (multitaskStrategy rollback) keeps the transcript as it found it, like a side question.
  const rolledBack = request.rollback?.byRunId !== undefined;
  const messages =
    record.sideQuestion || rolledBack ? undefined : working ? working.slice(1) : [...before, ...outcome.added];
  host.transcript.commitRun(messages, outcome.usage, host.hostEnv.now());
  const verificationSummary = buildVerificationSummary(host.verifications.forRun(record.runId));
  const result: AgentResult = toAgentResult(outcome, verificationSummary);
  record.result = result;
  if (outcome.error) {
    record.error = outcome.error;
    if (outcome.status === 'failed') emit(record.runId, 'error', outcome.error);
  }
  record.endedAtMs = host.hostEnv.now();
  // post_response: the run ended with a final answer (completed, or stopped after answering); on_success: completed.
  if (hooks?.wants('post_response') && (outcome.status === 'completed' || result.text !== ''))
    hooks.observe('post_response', runResultPayload(config, record, result, outcome.status, host.hostEnv.now()), {
      sessionId,
    });
  host.runs.setStatus(record, outcome.status);
  // A traced run's agent_end names its trace in its metadata (`trace_id`).
  emit(record.runId, 'agent_end', agentEndPayload(config, outcome, result, verificationSummary), ctx.trace?.traceId);
  if (outcome.status === 'completed' && hooks?.wants('on_success'))
    hooks.observe('on_success', runResultPayload(config, record, result, outcome.status, host.hostEnv.now()), {
      sessionId,
    });
  await host.saveAfterRun();
  return record;
}

/** The planning services of one run: the session's choices, the run's LLM invoker, status and reports. */
function plannedRunDeps(host: RunProducerHost, record: RunRecord, loop: LoopDeps): PlannedRunDeps {
  return {
    llm: loop.llm,
    planningMode: host.config.planningMode,
    goalTracking: host.config.goalTracking,
    setStatus: (status) => host.runs.setStatus(record, status),
    hooks: host.governance().governance.hooks,
    loop,
    runReports: async () => {
      await host.verifications.settleRun();
      return host.verifications.forRun(record.runId);
    },
  };
}
