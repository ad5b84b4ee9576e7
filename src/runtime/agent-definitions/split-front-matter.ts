/** A Markdown file split into its YAML front matter (undefined when it has none) and its body. */
export interface FrontMatterParts {
  readonly frontMatter: string | undefined;
  readonly body: string;
}

/**
 * Split `---\n<yaml>\n---\n<body>` (a leading BOM and CRLF line ends allowed; `...` also closes). A file not
 * starting with a `---` line has no front matter; one whose front matter is never closed throws.
 */
export function splitFrontMatter(text: string): FrontMatterParts {
  const source = text.startsWith('\uFEFF') ? text.slice(1) : text;
  const lines = source.split(/\r?\n/);
  if (lines[0]?.trimEnd() !== '---') return { frontMatter: undefined, body: source };
  for (let i = 1; i < lines.length; i += 1) {
    const line = lines[i].trimEnd();
    if (line === '---' || line === '...')
      return { frontMatter: lines.slice(1, i).join('\n'), body: lines.slice(i + 1).join('\n') };
  }
  throw new Error('the front matter opened by "---" on line 1 is never closed by a "---" line');
}
