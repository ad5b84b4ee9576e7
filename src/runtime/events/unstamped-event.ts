/** An event before the log stamps its sequences. */
export interface UnstampedEvent {
  version: 1;
  type: string;
  payload: Record<string, unknown>;
  metadata: {
    run_id?: string;
    session_id: string;
    timestamp_ms: number;
    tenant_id?: string;
    principal?: string;
    agent_template_id?: string;
    correlation_id?: string;
  };
}
