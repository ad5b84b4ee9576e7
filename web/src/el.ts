/** What `el` accepts as a child: nodes, or text (always inserted as a text node, never parsed as HTML). */
export type Child = Node | string | number | null | undefined | false;

/** Attributes and properties of `el`: `class`, `data-*`, `aria-*` and other attributes by name; `on*` handlers as functions. */
export type Props = Record<string, string | number | boolean | null | undefined | ((event: Event) => void)>;

/**
 * Create an element safely: text children become text nodes and attribute values are set with
 * setAttribute, so untrusted strings (model text, tool output, arguments) are never parsed as HTML.
 */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === 'function') {
      node.addEventListener(name.replace(/^on/, '').toLowerCase(), value);
      continue;
    }
    if (name === 'style') throw new Error('el: inline styles are blocked by the CSP; use a class');
    node.setAttribute(name, value === true ? '' : String(value));
  }
  append(node, ...children);
  return node;
}

/** Append children (text as text nodes). */
export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(
      typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child,
    );
  }
}

/** Remove every child of a node. */
export function clear(node: Node): void {
  while (node.firstChild) node.removeChild(node.firstChild);
}

/** Replace a node's children. */
export function replaceChildren(node: Node, ...children: Child[]): void {
  clear(node);
  append(node, ...children);
}
