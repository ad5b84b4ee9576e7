import { createHash } from 'node:crypto';
import type { ChatMessage } from '../../protocol/chat-message.js';
import type { Usage } from '../../protocol/run-record.js';
import type { RuntimeEventPayloads } from '../../protocol/runtime-event.js';
import type { GovernanceSnapshot } from '../invocation/invocation-context.js';
import type { LlmToolSpec } from '../llm/llm-provider.js';

type Payload<T extends keyof RuntimeEventPayloads> = RuntimeEventPayloads[T];

/** `sha256:<hex>` of the bytes (or the string's UTF-8). */
export function sha256Digest(data: string | Buffer): string {
  return `sha256:${createHash('sha256').update(data).digest('hex')}`;
}

/** A tool list's names and digest, computed once per list (sessions with the same tools share one list). */
interface ToolListEvidence {
  readonly names: readonly string[];
  readonly digest: string;
}

const toolLists = new WeakMap<readonly LlmToolSpec[], ToolListEvidence>();

function toolListEvidence(tools: readonly LlmToolSpec[]): ToolListEvidence {
  let evidence = toolLists.get(tools);
  if (evidence === undefined) {
    evidence = Object.freeze({
      names: Object.freeze(tools.map((tool) => tool.name)),
      digest: sha256Digest(JSON.stringify(tools)),
    });
    toolLists.set(tools, evidence);
  }
  return evidence;
}

/** run_capability_bound: the tools and limits a run starts with (`callSequence`: model calls already made, 0 fresh). */
export function runCapabilityBound(
  model: string,
  tools: readonly LlmToolSpec[],
  governance: GovernanceSnapshot,
  callSequence: number,
): Payload<'run_capability_bound'> {
  const list = toolListEvidence(tools);
  return {
    call_sequence: callSequence,
    snapshot: {
      model,
      // Shared, frozen arrays: the retained event costs no copy of the list.
      tools: list.names as string[],
      tools_digest: list.digest,
      max_tool_rounds: governance.maxToolRounds,
      max_execution_time_ms: governance.maxExecutionTimeMs,
      max_parse_retries: governance.maxParseRetries,
      duplicate_tool_call_threshold: governance.duplicateToolCallThreshold,
      tool_timeout_ms: governance.toolTimeoutMs,
    },
  };
}

/** model_presentation_bound: the tool definitions one model call is given. */
export function modelPresentationBound(
  callSequence: number,
  tools: readonly LlmToolSpec[],
): Payload<'model_presentation_bound'> {
  const list = toolListEvidence(tools);
  return {
    snapshot: {
      call_sequence: callSequence,
      tool_count: list.names.length,
      tools: list.names as string[],
      tools_digest: list.digest,
    },
  };
}

/** model_input_bound: one provider request as sent (its body's size and digest). */
export function modelInputBound(
  callSequence: number,
  model: string,
  messageCount: number,
  bodyBytes: number,
  bodyDigest: string,
): Payload<'model_input_bound'> {
  return {
    snapshot: {
      call_sequence: callSequence,
      model,
      message_count: messageCount,
      input_bytes: bodyBytes,
      input_digest: bodyDigest,
    },
  };
}

/** model_usage_bound: what the provider reported for a call, and how many tool results (and distinct ones) its input held. */
export function modelUsageBound(
  callSequence: number,
  usage: Usage,
  messages: readonly ChatMessage[],
): Payload<'model_usage_bound'> {
  let total = 0;
  const distinct = new Set<string>();
  for (const message of messages) {
    if (message.role !== 'tool') continue;
    total += 1;
    distinct.add(message.content ?? '');
  }
  return {
    snapshot: {
      call_sequence: callSequence,
      reported_prompt_tokens: usage.promptTokens,
      reported_completion_tokens: usage.completionTokens,
      reported_total_tokens: usage.totalTokens,
      reported_cache_read_tokens: null,
      reported_cache_write_tokens: null,
      tool_results: { total_count: total, unique_count: distinct.size },
    },
  };
}

/** tool_request_bound: a tool call's validated arguments, bound by digest before the gates that follow validation. */
export function toolRequestBound(
  id: string,
  name: string,
  origin: string,
  args: unknown,
): Payload<'tool_request_bound'> {
  const json = JSON.stringify(args ?? {});
  return {
    tool_id: id,
    tool_name: name,
    snapshot: { version: 1, origin, args_bytes: Buffer.byteLength(json), args_digest: sha256Digest(json) },
  };
}
