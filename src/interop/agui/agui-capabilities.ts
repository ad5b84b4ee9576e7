import type { AgentCapabilities } from '@ag-ui/core';

/** What the AG-UI adapter supports (GET /v1/agui/capabilities); `sandboxed` says whether model-chosen commands are contained here. */
export function aguiCapabilities(sandboxed: boolean): AgentCapabilities {
  return {
    identity: {
      name: 'A3S Code',
      type: 'a3s-code',
      description: 'A coding agent server: AG-UI threads are sessions, runs go through the session kernel.',
    },
    transport: { streaming: true, websocket: false, httpBinary: false, pushNotifications: false, resumable: false },
    tools: { supported: true, parallelCalls: true, clientProvided: false },
    output: { structuredOutput: false },
    state: { snapshots: true, deltas: false, memory: false, persistentState: true },
    reasoning: { supported: true, streaming: true, encrypted: false },
    multimodal: { input: { image: true, audio: false, video: false, pdf: false, file: true } },
    execution: { codeExecution: true, sandboxed },
    humanInTheLoop: {
      supported: true,
      approvals: true,
      interrupts: true,
      approveWithEdits: false,
      interventions: false,
      feedback: false,
    },
    custom: {
      threadId: 'the session id (POST /v1/sessions creates one)',
      runId:
        "the client's run id is the run's Idempotency-Key and is echoed as metadata.runId; ours is metadata.a3sRunId",
      interrupts:
        'reason "tool_call": resume with {status: "resolved", payload: {approved, reason?, always?}} or {status: "cancelled"}; reason "user_question": resume with {status: "resolved", payload: {answer} or {option} or {declined: true}} or {status: "cancelled"} (declines)',
      multimodal:
        'image and document parts with source {type: "data"} or {type: "file", value: attachmentId}: image/* (when the session\'s model lists "image" in modalities.input) and text/* files',
      multitaskStrategy: 'forwardedProps.multitaskStrategy: reject (default), enqueue, interrupt or rollback',
    },
  };
}
