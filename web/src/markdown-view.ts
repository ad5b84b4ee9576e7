import { Lexer, type Token, type Tokens } from 'marked';
import { el, type Child } from './el.js';

/** Link protocols the console makes clickable; anything else (javascript:, data:, vbscript:, relative) stays text. */
const SAFE_PROTOCOLS: ReadonlySet<string> = new Set(['http:', 'https:', 'mailto:']);

const ENTITIES: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };

/** Decode the character references marked leaves in text (`&amp;`, `&#39;`, `&#x1F600;`); unknown ones stay as written. */
function decodeEntities(text: string): string {
  return text.replace(/&(#\d{1,7}|#x[\da-f]{1,6}|[a-z]+);/gi, (whole: string, name: string) => {
    if (name.startsWith('#')) {
      const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return ENTITIES[name.toLowerCase()] ?? whole;
  });
}

/** The URL of `href` if it is absolute with an allowed protocol, else undefined. */
export function safeHref(href: string): string | undefined {
  try {
    const url = new URL(href);
    return SAFE_PROTOCOLS.has(url.protocol) ? url.href : undefined;
  } catch {
    return undefined;
  }
}

function anchor(href: string, title: string | null | undefined, className: string, ...children: Child[]): HTMLElement {
  return el(
    'a',
    { href, title: title ?? undefined, class: className, rel: 'noopener noreferrer', target: '_blank' },
    ...children,
  );
}

function inline(tokens: readonly Token[] | undefined): Child[] {
  return (tokens ?? []).map(inlineToken);
}

function inlineToken(token: Token): Child {
  switch (token.type) {
    case 'text': {
      const t = token as Tokens.Text;
      return t.tokens && t.tokens.length > 0 ? el('span', {}, ...inline(t.tokens)) : decodeEntities(t.text);
    }
    case 'escape':
      return (token as Tokens.Escape).text;
    case 'strong':
      return el('strong', {}, ...inline((token as Tokens.Strong).tokens));
    case 'em':
      return el('em', {}, ...inline((token as Tokens.Em).tokens));
    case 'del':
      return el('del', {}, ...inline((token as Tokens.Del).tokens));
    case 'codespan':
      return el('code', {}, (token as Tokens.Codespan).text);
    case 'br':
      return el('br');
    case 'link': {
      const t = token as Tokens.Link;
      const href = safeHref(t.href);
      return href ? anchor(href, t.title, 'md-link', ...inline(t.tokens)) : t.raw;
    }
    case 'image': {
      // Never an <img>: the page fetches nothing the model names; a safe URL becomes a link to it.
      const t = token as Tokens.Image;
      const href = safeHref(t.href);
      return href ? anchor(href, t.title, 'md-image-link', `image: ${t.text || href}`) : t.raw;
    }
    case 'checkbox':
      return el('input', { type: 'checkbox', disabled: true, checked: (token as Tokens.Checkbox).checked });
    case 'html':
      // Raw HTML is shown as the text the model wrote.
      return token.raw;
    default:
      return token.raw;
  }
}

const HEADINGS = ['h1', 'h2', 'h3', 'h4', 'h5', 'h6'] as const;

function tableCell(tag: 'th' | 'td', cell: Tokens.TableCell): HTMLElement {
  return el(tag, { class: cell.align ? `align-${cell.align}` : undefined }, ...inline(cell.tokens));
}

function block(token: Token): Child {
  switch (token.type) {
    case 'space':
      return null;
    case 'paragraph':
      return el('p', {}, ...inline((token as Tokens.Paragraph).tokens));
    case 'text': {
      // Block-level text (inside tight list items).
      const t = token as Tokens.Text;
      return t.tokens ? el('span', {}, ...inline(t.tokens)) : decodeEntities(t.text);
    }
    case 'heading': {
      const t = token as Tokens.Heading;
      const tag = HEADINGS[Math.min(Math.max(t.depth, 1), 6) - 1] ?? 'h6';
      return el(tag, {}, ...inline(t.tokens));
    }
    case 'code': {
      const t = token as Tokens.Code;
      // The info string's first word, reduced to a class-safe name; no highlighting (see docs/console.md).
      const lang = (t.lang ?? '').split(/\s/)[0]?.replace(/[^\w+#.-]/g, '') ?? '';
      return el(
        'pre',
        { class: 'md-code', 'data-lang': lang || undefined },
        el('code', { class: lang ? `language-${lang}` : undefined }, t.text),
      );
    }
    case 'blockquote':
      return el('blockquote', {}, ...blocks((token as Tokens.Blockquote).tokens));
    case 'list': {
      const t = token as Tokens.List;
      const items = t.items.map((item) =>
        el('li', { class: item.task ? 'md-task' : undefined }, ...blocks(item.tokens)),
      );
      return t.ordered
        ? el('ol', { start: typeof t.start === 'number' && t.start !== 1 ? t.start : undefined }, ...items)
        : el('ul', {}, ...items);
    }
    case 'table': {
      const t = token as Tokens.Table;
      return el(
        'div',
        { class: 'md-table' },
        el(
          'table',
          {},
          el('thead', {}, el('tr', {}, ...t.header.map((cell) => tableCell('th', cell)))),
          el('tbody', {}, ...t.rows.map((row) => el('tr', {}, ...row.map((cell) => tableCell('td', cell))))),
        ),
      );
    }
    case 'hr':
      return el('hr');
    case 'html':
      return el('p', { class: 'md-html' }, token.raw.replace(/\n+$/, ''));
    case 'def':
      return null;
    default:
      return inlineToken(token);
  }
}

function blocks(tokens: readonly Token[]): Child[] {
  return tokens.map((token) => (token.type === 'checkbox' ? inlineToken(token) : block(token)));
}

/**
 * Model text as DOM nodes: marked's lexer (GFM, single newlines as line breaks) tokenizes it and every token
 * becomes an element built with `el`, so nothing the model writes is parsed as HTML.
 */
export function markdownNodes(text: string): Child[] {
  return blocks(Lexer.lex(text, { gfm: true, breaks: true }));
}
