// Every relative Markdown link in README.md and docs/*.md resolves to a file inside the repository, and an
// anchor (`file.md#x`, `#x`) names a heading of its target the way GitHub spells heading ids.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const DOCS = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** The text outside fenced code blocks and inline code spans, where a link is a link. */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '``');
}

/** GitHub's heading ids: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
export function headingIds(markdown: string): Set<string> {
  const ids = new Set<string>();
  const seen = new Map<string, number>();
  for (const match of markdown.replace(/^```[\s\S]*?^```/gm, '').matchAll(/^#{1,6} +(.+?) *#* *$/gm)) {
    const base = (match[1] ?? '')
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    ids.add(count === 0 ? base : `${base}-${count}`);
  }
  return ids;
}

/** Every relative link target of a Markdown file: `[text](target)` and `![alt](target)`. */
function relativeLinks(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\]\(([^)\s]+)(?: +"[^"]*")?\)/g)]
    .map((match) => match[1] ?? '')
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

describe('Markdown links', () => {
  it('finds the documents and their links', () => {
    expect(DOCS).toContain('docs/index.md');
    expect(relativeLinks(readFileSync(join(ROOT, 'README.md'), 'utf8'))).toContain('docs/index.md');
  });

  it.each(DOCS)('%s: every relative link resolves inside the repository', (doc) => {
    const markdown = readFileSync(join(ROOT, doc), 'utf8');
    const broken: string[] = [];
    for (const target of relativeLinks(markdown)) {
      const [path = '', anchor] = target.split('#');
      const file = path === '' ? join(ROOT, doc) : resolve(ROOT, dirname(doc), decodeURIComponent(path));
      const inside = relative(ROOT, file);
      if (inside.startsWith('..') || !existsSync(file)) {
        broken.push(`${target} (no such file in the repository)`);
        continue;
      }
      if (anchor && file.endsWith('.md') && !headingIds(readFileSync(file, 'utf8')).has(anchor)) {
        broken.push(`${target} (no heading #${anchor} in ${relative(ROOT, file)})`);
      }
    }
    expect(broken, `${doc} has broken links`).toEqual([]);
  });

  it('docs/index.md lists every document in docs/', () => {
    const index = relativeLinks(readFileSync(join(ROOT, 'docs/index.md'), 'utf8'));
    const missing = DOCS.filter((doc) => doc.startsWith('docs/') && doc !== 'docs/index.md').filter(
      (doc) => !index.includes(doc.slice('docs/'.length)),
    );
    expect(missing).toEqual([]);
  });
});
