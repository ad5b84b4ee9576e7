import { CONTINUE, stopWith, type StageVerdict, type ToolCallState } from '../tool-call-state.js';

/** Stage 2: the active-skill restriction hook point (skills may limit which tools run). */
export async function skillRestriction(state: ToolCallState): Promise<StageVerdict> {
  const reason = state.deps.governance.restrictTool?.(state.call.name, state.call.origin);
  return reason === undefined ? CONTINUE : stopWith(`Tool ${state.call.name} is not available now: ${reason}`);
}
