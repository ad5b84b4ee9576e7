/** Characters of a child's answer the parent's model sees from its start and its end (the seed's cut). */
export const TASK_OUTPUT_HEAD_CHARS = 3000;
export const TASK_OUTPUT_TAIL_CHARS = 800;

/** A child's answer cut to the seed's bound: the head and the tail, with a marker saying how much is left out. */
export function cutTaskOutput(text: string): { text: string; truncated: boolean } {
  if (text.length <= TASK_OUTPUT_HEAD_CHARS + TASK_OUTPUT_TAIL_CHARS) return { text, truncated: false };
  const cut = text.length - TASK_OUTPUT_HEAD_CHARS - TASK_OUTPUT_TAIL_CHARS;
  return {
    text: `${text.slice(0, TASK_OUTPUT_HEAD_CHARS)}\n[... ${cut} characters of the child's output cut ...]\n${text.slice(-TASK_OUTPUT_TAIL_CHARS)}`,
    truncated: true,
  };
}

/** The instruction added to a task's prompt when it names an output_schema. */
export function structuredPrompt(schema: Record<string, unknown>): string {
  return `Answer with one JSON value only (no prose, no code fence) that satisfies this JSON Schema:\n${JSON.stringify(schema)}`;
}

/** The child's answer as JSON (a code fence around it is tolerated); undefined when it is not JSON. */
export function parseStructured(text: string): unknown {
  const fenced = /^\s*```(?:json)?\s*\n([\s\S]*?)\n\s*```\s*$/.exec(text);
  try {
    return JSON.parse(fenced ? fenced[1]! : text) as unknown;
  } catch {
    return undefined;
  }
}
