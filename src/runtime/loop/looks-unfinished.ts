/** Why an answer looks unfinished (the `reason` of `continuation_injected`). */
export type UnfinishedReason = 'length' | 'empty_after_tools' | 'announces_next_step';

/** What the classifier reads of a turn that called no tools. */
export interface FinalTurn {
  /** The answer's text (empty when the model said nothing). */
  readonly text: string;
  /** The provider's finish_reason. */
  readonly finishReason: string | undefined;
  /** The turn answered tool results (the message before it is a tool message). */
  readonly afterToolResults: boolean;
}

// Only the end of an answer is read: the classifier costs the same for a long answer as for a short one.
const TAIL_CHARS = 400;

/** Words that may open the last sentence before the announcement itself ("Okay, let me ..."). */
const LEAD = String.raw`(?:(?:ok|okay|alright|all right|great|good|sure|so|and|now|next|then|first|finally)[,!]?\s+)*`;
/** Words that put what follows next in a sequence ("Next, I will ..."). */
const SEQUENCE = String.raw`(?:(?:ok|okay|alright|sure|so|and)[,!]?\s+)*(?:now|next|then|first|after that|afterwards)[,!]?\s+`;
/** "I will" in its spellings. */
const I_WILL = String.raw`i(?:'ll|’ll| will| shall| am going to|'m going to|’m going to| am about to|'m about to|’m about to| need to| have to| must)`;
/** Verbs of a step still to take (after "I will" without a leading "now"/"next"). */
const STEP_VERBS =
  'start|begin|check|look|run|rerun|read|open|search|find|grep|list|scan|inspect|examine|explore|investigate|review|' +
  'verify|validate|confirm|test|debug|trace|dig|create|write|draft|add|edit|update|modify|change|fix|patch|apply|' +
  'implement|refactor|rename|move|delete|remove|install|build|compile|execute|call|fetch|download|clone|load|' +
  'query|gather|collect|compare|analyze|analyse|prepare|outline|summarize|summarise|explain|try|continue|proceed|go';

/**
 * The documented patterns (docs/session-options.md "Continuation"): a last sentence that matches one announces a
 * next step instead of giving a result. Each is tried on the last sentence, lower-cased, with list markers and a
 * leading "Okay,"/"Now,"/"Next," removed.
 */
export const NEXT_STEP_PATTERNS: readonly { readonly name: string; readonly pattern: RegExp }[] = [
  // "Let me check ...", "Let's run ...", not "Let me know ..." (which hands the turn back to the user).
  { name: 'let me / let us', pattern: new RegExp(String.raw`^${LEAD}let(?:'s|’s| me| us)\s+(?!know\b)\w`) },
  // "Next, I will ...", "Now I'll ...", "First, I'm going to ...": any verb after a sequencing word.
  { name: 'now / next / then / first + I will', pattern: new RegExp(String.raw`^${SEQUENCE}${I_WILL}\s+\w`) },
  // "I'll now ...", "I will next ...".
  { name: 'I will now / next', pattern: new RegExp(String.raw`^${LEAD}${I_WILL}\s+(?:now|next|then|first)\b`) },
  // "I'll check ...", "I'm going to run ...", "I need to inspect ...": a step verb.
  { name: 'I will + step verb', pattern: new RegExp(String.raw`^${LEAD}${I_WILL}\s+(?:also\s+)?(?:${STEP_VERBS})\b`) },
  // "We'll run ...", "We need to check ...".
  {
    name: 'we will + step verb',
    pattern: new RegExp(
      String.raw`^${LEAD}we(?:'ll|’ll| will| need to| are going to|'re going to)\s+(?:now\s+)?(?:${STEP_VERBS})\b`,
    ),
  },
  // "Proceeding with ...", "Moving on to ...", "Continuing with ...", "Starting with ...".
  {
    name: 'proceeding / moving on',
    pattern: new RegExp(String.raw`^${LEAD}(?:proceeding|moving on|continuing|starting|going)\s+(?:to|with)\b`),
  },
  // "The next step is to ...".
  { name: 'the next step is', pattern: new RegExp(String.raw`^${LEAD}(?:the\s+)?next\s+step\s+(?:is|will be)\b`) },
];

/** The last sentence of `text` (lower-cased, list markers and quotes removed), and whether the text ends with a colon. */
function lastSentence(text: string): { sentence: string; colon: boolean } {
  const tail = text.slice(-TAIL_CHARS).trimEnd();
  // A trailing colon (also inside closing markup: "**Steps:**") announces what never came.
  const bare = tail.replace(/[*_`"'”’)\]\s]+$/u, '');
  if (bare.endsWith(':') || bare.endsWith('：')) return { sentence: '', colon: true };
  const lines = bare.split(/\n+/);
  const line = (lines.at(-1) ?? '').trim();
  const sentences = line.split(/(?<=[.!?。])\s+/);
  let sentence = (sentences.at(-1) ?? '').trim();
  // "Let's recap: all done." is a result: only what follows the last colon of the sentence counts.
  const colon = sentence.lastIndexOf(': ');
  if (colon >= 0 && colon < sentence.length - 2) sentence = sentence.slice(colon + 2);
  sentence = sentence.replace(/^(?:[-*+>#]+|\d+[.)])\s*/u, '').replace(/^["'“‘(*_`]+/u, '');
  return { sentence: sentence.toLowerCase(), colon: false };
}

/** Whether an answer's last sentence announces a next step (a NEXT_STEP_PATTERNS match or a trailing colon). */
export function announcesNextStep(text: string): boolean {
  if (text.trim() === '') return false;
  const { sentence, colon } = lastSentence(text);
  if (colon) return true;
  // A question hands the turn to the user ("Shall I proceed?").
  if (sentence === '' || sentence.endsWith('?')) return false;
  return NEXT_STEP_PATTERNS.some(({ pattern }) => pattern.test(sentence));
}

/**
 * The "looks unfinished" rule of continuationEnabled: the provider stopped for length, the answer after tool
 * results is empty, or its last sentence announces a next step instead of a result. Undefined: it is finished.
 */
export function looksUnfinished(turn: FinalTurn): UnfinishedReason | undefined {
  if (turn.finishReason === 'length') return 'length';
  if (turn.text.trim() === '') return turn.afterToolResults ? 'empty_after_tools' : undefined;
  return announcesNextStep(turn.text) ? 'announces_next_step' : undefined;
}
