import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
const METHOD_PREFIX = /^((?:GET|POST|PUT|PATCH|DELETE)(?:\/(?:GET|POST|PUT|PATCH|DELETE))*) (.+)$/;

/** `METHOD /path` with every path parameter written `:p` (openapi's `{id}`, the table's `:id`). */
function key(method: string, path: string): string {
  return `${method.toUpperCase()} ${path.replace(/\{[^}]+\}/g, ':p').replace(/:[A-Za-z]+/g, ':p')}`;
}

/**
 * The operations docs/api.md's route table names. A first cell lists routes in backticks: `GET/DELETE /v1/x/:id`,
 * `.../tools` (a session's: `/v1/sessions/:id/tools`), `GET .../memory/recent\|similar` (alternatives of the last
 * segment); a route without a method takes the one before it in the cell; `?query`, `{body}` and `(WebSocket)` are
 * notes.
 */
function tableRoutes(markdown: string): Set<string> {
  const listed = new Set<string>();
  for (const line of markdown.split('\n')) {
    if (!line.startsWith('| `')) continue;
    const cell = line.split(' | ')[0] ?? '';
    let methods = ['GET'];
    for (const [, token = ''] of cell.matchAll(/`([^`]+)`/g)) {
      const prefixed = METHOD_PREFIX.exec(token);
      let path = token;
      if (prefixed) {
        methods = (prefixed[1] ?? 'GET').split('/');
        path = prefixed[2] ?? '';
      }
      path = path.replace(/[ ?{(].*$/, '').trim();
      if (path.startsWith('...')) path = `/v1/sessions/:id${path.slice(3)}`;
      const [first = '', ...rest] = path.split('\\|');
      const parent = first.slice(0, first.lastIndexOf('/') + 1);
      for (const each of [first, ...rest.map((alternative) => parent + alternative)])
        for (const method of methods) listed.add(key(method, each));
    }
  }
  return listed;
}

describe("docs/api.md's route table", () => {
  it('lists every operation of openapi.yaml, and only those', () => {
    const spec = YAML.parse(readFileSync(join(process.cwd(), 'openapi.yaml'), 'utf8')) as {
      paths: Record<string, Partial<Record<(typeof METHODS)[number], unknown>>>;
    };
    const operations = Object.entries(spec.paths).flatMap(([path, item]) =>
      METHODS.filter((method) => item[method] !== undefined).map((method) => key(method, path)),
    );
    const listed = tableRoutes(readFileSync(join(process.cwd(), 'docs', 'api.md'), 'utf8'));
    expect(operations.length).toBeGreaterThan(80);
    expect(operations.filter((operation) => !listed.has(operation))).toEqual([]);
    expect([...listed].filter((route) => !operations.includes(route))).toEqual([]);
  });
});
