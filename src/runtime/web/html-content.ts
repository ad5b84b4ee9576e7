import { createRequire } from 'node:module';
import TurndownService from 'turndown';

// The few DOM members used here, as @mixmark-io/domino (the DOM turndown itself parses with) implements them.
interface DomNode {
  readonly nodeType: number;
  readonly nodeName: string;
  readonly childNodes: ArrayLike<DomNode>;
  readonly textContent: string | null;
}
interface DomElement extends DomNode {
  readonly innerHTML: string;
  querySelectorAll(selector: string): ArrayLike<DomElement>;
  remove(): void;
}
interface DomDocument {
  readonly body: DomElement | null;
  readonly documentElement: DomElement;
  querySelectorAll(selector: string): ArrayLike<DomElement>;
}
interface Domino {
  createDocument(html: string, force?: boolean): DomDocument;
}

const domino = createRequire(import.meta.url)('@mixmark-io/domino') as Domino;

/** Elements that are never page content. */
const NOT_CONTENT = ['script', 'style', 'noscript', 'template'] as const;
const BLOCKS: ReadonlySet<string> = new Set([
  'ADDRESS',
  'ARTICLE',
  'ASIDE',
  'BLOCKQUOTE',
  'BR',
  'DD',
  'DIV',
  'DL',
  'DT',
  'FIELDSET',
  'FIGCAPTION',
  'FIGURE',
  'FOOTER',
  'FORM',
  'H1',
  'H2',
  'H3',
  'H4',
  'H5',
  'H6',
  'HEADER',
  'HR',
  'LI',
  'MAIN',
  'NAV',
  'OL',
  'P',
  'PRE',
  'SECTION',
  'TABLE',
  'TR',
  'UL',
  'TITLE',
]);

let turndownCache: TurndownService | undefined;

function turndown(): TurndownService {
  if (!turndownCache) {
    turndownCache = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' });
    turndownCache.remove([...NOT_CONTENT]);
  }
  return turndownCache;
}

function plainText(node: DomNode, out: string[]): void {
  if (node.nodeType === 3) {
    out.push((node.textContent ?? '').replace(/\s+/g, ' '));
    return;
  }
  if (node.nodeType !== 1 && node.nodeType !== 9 && node.nodeType !== 11) return;
  const block = BLOCKS.has(node.nodeName.toUpperCase());
  if (block) out.push('\n');
  if (node.nodeName.toUpperCase() === 'PRE') out.push(node.textContent ?? '');
  else for (let i = 0; i < node.childNodes.length; i++) plainText(node.childNodes[i] as DomNode, out);
  if (block) out.push('\n');
}

function tidyText(text: string): string {
  return text
    .split('\n')
    .map((line) => line.trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/**
 * An HTML page in the form web_fetch returns: `markdown` (turndown: ATX headings, fenced code, `-` bullets),
 * `text` (the visible text, one block per line) or `html`. With `bodyOnly` only the <body> is kept; script,
 * style, noscript and template elements are always dropped, except from `html` of the whole page, which is the
 * page as served.
 */
export function convertHtml(html: string, format: 'markdown' | 'text' | 'html', bodyOnly: boolean): string {
  if (format === 'html' && !bodyOnly) return html;
  const document = domino.createDocument(html, true);
  for (const tag of NOT_CONTENT) {
    const found = document.querySelectorAll(tag);
    for (let i = found.length - 1; i >= 0; i--) (found[i] as DomElement).remove();
  }
  const root = bodyOnly ? (document.body ?? document.documentElement) : document.documentElement;
  if (format === 'html') return root.innerHTML.trim();
  if (format === 'markdown')
    return turndown()
      .turndown(root as unknown as TurndownService.Node)
      .trim();
  const out: string[] = [];
  plainText(root, out);
  return tidyText(out.join(''));
}
