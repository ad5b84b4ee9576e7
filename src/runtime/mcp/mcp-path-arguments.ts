/** Property names (lowercased, `_` and `-` dropped) that name a path argument of an MCP tool. */
const PATH_NAMES = new Set([
  'path',
  'paths',
  'file',
  'files',
  'filepath',
  'filepaths',
  'filename',
  'filenames',
  'dir',
  'dirs',
  'directory',
  'directories',
  'folder',
]);

/** JSON Schema `format`s that say a string is a path. */
const PATH_FORMATS = new Set(['path', 'file-path', 'filepath', 'directory-path', 'uri-reference']);

function isStringSchema(schema: Record<string, unknown>): boolean {
  const type = schema.type;
  return type === 'string' || (Array.isArray(type) && type.includes('string'));
}

function isStringArraySchema(schema: Record<string, unknown>): boolean {
  const type = schema.type;
  const items = schema.items;
  return (
    (type === 'array' || (Array.isArray(type) && type.includes('array'))) &&
    items !== null &&
    typeof items === 'object' &&
    isStringSchema(items as Record<string, unknown>)
  );
}

function saysPath(name: string, schema: Record<string, unknown>): boolean {
  const key = name.toLowerCase().replace(/[_-]/g, '');
  if (PATH_NAMES.has(key) || key.endsWith('path') || key.endsWith('paths')) return true;
  if (typeof schema.format === 'string' && PATH_FORMATS.has(schema.format.toLowerCase())) return true;
  const items = schema.items as Record<string, unknown> | undefined;
  if (items && typeof items.format === 'string' && PATH_FORMATS.has(items.format.toLowerCase())) return true;
  return typeof schema.description === 'string' && /\b(file|directory|folder)?\s*paths?\b/i.test(schema.description);
}

/**
 * The top-level arguments of an MCP tool that are paths, by its input schema: a string (or array of strings)
 * property whose name is a path word (path, paths, file, files, file_path, filename, dir, directory, folder,
 * or ending in `path`/`paths`, like `source_path` or `targetPath`), or whose `format` is path, file-path,
 * directory-path or uri-reference, or whose description mentions a path. Permission rules match each such
 * argument's value as a workspace path (CallSubjects), in addition to the compact JSON of the arguments.
 */
export function mcpPathArguments(inputSchema: unknown): readonly string[] {
  if (inputSchema === null || typeof inputSchema !== 'object') return [];
  const properties = (inputSchema as { properties?: unknown }).properties;
  if (properties === null || typeof properties !== 'object') return [];
  const names: string[] = [];
  for (const [name, value] of Object.entries(properties as Record<string, unknown>)) {
    if (value === null || typeof value !== 'object') continue;
    const schema = value as Record<string, unknown>;
    if ((isStringSchema(schema) || isStringArraySchema(schema)) && saysPath(name, schema)) names.push(name);
  }
  return names;
}

/** The path values of one call of an MCP tool with these path arguments (strings, and strings in arrays). */
export function mcpCallPaths(names: readonly string[], args: unknown): { path: string }[] {
  if (names.length === 0 || args === null || typeof args !== 'object') return [];
  const record = args as Record<string, unknown>;
  const paths: { path: string }[] = [];
  for (const name of names) {
    const value = record[name];
    if (typeof value === 'string') paths.push({ path: value });
    else if (Array.isArray(value)) for (const item of value) if (typeof item === 'string') paths.push({ path: item });
  }
  return paths;
}
