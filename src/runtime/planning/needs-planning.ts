// Explicit cues that a request is multi-step work: asking for a plan, or ordered steps.
const PLAN_CUES =
  /\b(plan|step[- ]by[- ]step|steps|phases?|roadmap|break (?:it|this) down|first\b[\s\S]{1,200}\bthen|refactor|migrate|implement)\b/i;
const NUMBERED_LINE = /^\s*(?:\d+[.)]|[-*])\s+\S/gm;

/**
 * The local fallback of `planningMode: "auto"` when pre-analysis gives no valid answer (the seed's keyword
 * detection): explicit planning words, or a request written as two or more list items.
 */
export function needsPlanning(prompt: string): boolean {
  if (PLAN_CUES.test(prompt)) return true;
  return (prompt.match(NUMBERED_LINE)?.length ?? 0) >= 2;
}
