// CI: commit subjects stay under 72 characters, with the detail in the body. Checks every commit reachable
// from HEAD that was committed after the rule was introduced (older history is left as it was written).
import { execFileSync } from 'node:child_process';

const SINCE = '2026-12-02T16:30:00Z';
const MAX = 72;

let log;
try {
  log = execFileSync('git', ['log', `--since=${SINCE}`, '--format=%h%x09%s'], { encoding: 'utf8' });
} catch (error) {
  console.log(
    `commit subjects: no git history here (${error instanceof Error ? error.message.split('\n')[0] : error}); skipped`,
  );
  process.exit(0);
}
const long = log
  .split('\n')
  .filter(Boolean)
  .map((line) => line.split('\t'))
  .filter(([, subject]) => subject.length > MAX);
if (long.length > 0) {
  for (const [hash, subject] of long)
    console.error(`${hash}: subject is ${subject.length} characters (at most ${MAX}): ${subject}`);
  process.exit(1);
}
console.log(`commit subjects: every subject since ${SINCE} is at most ${MAX} characters`);
