import { createRequire } from 'node:module';
import type * as TreeSitter from '@vscode/tree-sitter-wasm';

/** A node of the bash syntax tree (tree-sitter-bash). */
export type BashNode = TreeSitter.Node;

const require = createRequire(import.meta.url);
const treeSitter = require('@vscode/tree-sitter-wasm') as typeof TreeSitter;

// Loaded once when this module is first imported, so parsing afterwards is synchronous.
await treeSitter.Parser.init();
const bash = await treeSitter.Language.load(require.resolve('@vscode/tree-sitter-wasm/wasm/tree-sitter-bash.wasm'));
const parser = new treeSitter.Parser();
parser.setLanguage(bash);

/**
 * Parse a bash command line synchronously and hand its root node to `read` (the tree is freed afterwards, so
 * nodes must not escape `read`); undefined when the parser gives up.
 */
export function withBashTree<T>(source: string, read: (root: BashNode) => T): T | undefined {
  const tree = parser.parse(source);
  if (!tree) return undefined;
  try {
    return read(tree.rootNode);
  } finally {
    tree.delete();
  }
}
