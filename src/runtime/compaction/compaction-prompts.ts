import { readFileSync } from 'node:fs';

/** The model-facing texts of a compaction (the .md files beside this one), read on the first compaction. */
export interface CompactionPrompts {
  /** System message of the summary request. */
  readonly system: string;
  /** User message of the summary request, with {{maxWords}} and {{transcript}}. */
  readonly request: string;
  /** What the summary message of the compacted transcript starts with. */
  readonly summaryPrefix: string;
}

let prompts: CompactionPrompts | undefined;

const read = (name: string) => readFileSync(new URL(`./${name}`, import.meta.url), 'utf8').trim();

/** The compaction prompts (read once per process, when the first compaction needs them). */
export function compactionPrompts(): CompactionPrompts {
  prompts ??= {
    system: read('compaction-system.md'),
    request: read('compaction-request.md'),
    summaryPrefix: read('summary-prefix.md'),
  };
  return prompts;
}
