import { parse as parseYaml } from 'yaml';
import { CodeError, type ErrorCode } from '../../errors.js';
import { AgentDefinitionFileSchema } from '../../protocol/agents.js';
import { formatZodIssues, zodFieldIssues } from '../../protocol/format-zod-issues.js';
import { parseRule } from '../policy/permission-policy.js';
import type { AgentDefinition, AgentSource } from './agent-definition.js';
import { isBuiltinAgent } from './builtin-agents.js';
import { isReadOnlyPolicy } from './read-only-agent-policy.js';
import { splitFrontMatter } from './split-front-matter.js';
import { compileWorkerAgent } from './worker-agent.js';

/** How a definition file is read: the name shown in errors, where it came from and the code its errors carry. */
export interface AgentFileContext {
  /** The file as errors name it (relative to what the caller named). */
  readonly file: string;
  readonly source: AgentSource;
  readonly errorCode: ErrorCode;
}

function fail(context: AgentFileContext, field: string, message: string): CodeError {
  return new CodeError(context.errorCode, `${context.file}: ${field ? `${field}: ` : ''}${message}`, {
    file: context.file,
    ...(field ? { field } : {}),
  });
}

/**
 * Parse one agent definition: `*.md` (YAML front matter; the body is the prompt unless `prompt` is given) or
 * `*.yaml`/`*.yml`; with neither `prompt` nor a body the description is the prompt. Every problem is a CodeError naming the file and the field; built-in names are refused.
 * Permissions: `deny` rules deny; a non-empty `allow` list makes the agent an allow-list (anything else denied).
 */
export function parseAgentFile(text: string, context: AgentFileContext): AgentDefinition {
  let yamlText: string;
  let body = '';
  if (/\.md$/i.test(context.file)) {
    let parts;
    try {
      parts = splitFrontMatter(text);
    } catch (error) {
      throw fail(context, '', error instanceof Error ? error.message : String(error));
    }
    if (parts.frontMatter === undefined)
      throw fail(context, '', 'a Markdown agent definition starts with YAML front matter between "---" lines');
    yamlText = parts.frontMatter;
    body = parts.body.trim();
  } else yamlText = text;
  let data: unknown;
  try {
    data = parseYaml(yamlText, { maxAliasCount: 50 });
  } catch (error) {
    throw fail(context, '', `invalid YAML: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data))
    throw fail(
      context,
      '',
      'the definition must be a YAML mapping of name, description, max_steps, permissions, model, prompt',
    );
  const parsed = AgentDefinitionFileSchema.safeParse(data);
  if (!parsed.success)
    throw new CodeError(context.errorCode, `${context.file}: ${formatZodIssues(parsed.error)}`, {
      file: context.file,
      field: zodFieldIssues(parsed.error, undefined, 1)[0]?.path ?? '(root)',
    });
  const file = parsed.data;
  if (isBuiltinAgent(file.name))
    throw fail(context, 'name', `"${file.name}" is a built-in agent and cannot be redefined; choose another name`);
  for (const list of ['allow', 'deny'] as const) {
    for (const [index, source] of (file.permissions?.[list] ?? []).entries()) {
      try {
        parseRule(source);
      } catch (error) {
        throw fail(context, `permissions.${list}.${index}`, error instanceof Error ? error.message : String(error));
      }
    }
  }
  // No `prompt` and no Markdown body is valid (the seed's own smoke registers such a file): the description,
  // which says what the agent is for, is then its instructions in the system prompt's role slot.
  const prompt = (file.prompt ?? body).trim() || file.description.trim();
  const allow = file.permissions?.allow ?? [];
  const deny = file.permissions?.deny ?? [];
  const permissions =
    allow.length > 0 || deny.length > 0
      ? {
          allow,
          deny,
          ask: [],
          defaultDecision: allow.length > 0 ? ('deny' as const) : ('allow' as const),
          enabled: true,
        }
      : undefined;
  if (file.kind !== undefined) {
    // The seed's worker file: compiled like workerAgents, except that a file (which the model can write)
    // never chooses confirmationInheritance (the field is not in the file schema).
    const worker = compileWorkerAgent({
      name: file.name,
      description: file.description,
      kind: file.kind,
      ...(file.hidden !== undefined ? { hidden: file.hidden } : {}),
      ...(permissions ? { permissions } : {}),
      ...(file.model !== undefined ? { model: file.model } : {}),
      ...((file.prompt ?? body).trim() ? { prompt: (file.prompt ?? body).trim() } : {}),
      ...(file.max_steps !== undefined ? { maxSteps: file.max_steps } : {}),
    });
    return { ...worker, source: context.source };
  }
  if (file.hidden !== undefined) throw fail(context, 'hidden', 'is a worker field: give `kind` too');
  return {
    name: file.name,
    description: file.description,
    mode: 'general',
    prompt,
    ...(permissions ? { permissions } : {}),
    ...(file.model !== undefined ? { model: file.model } : {}),
    ...(file.max_steps !== undefined ? { maxSteps: file.max_steps } : {}),
    source: context.source,
    readOnly: isReadOnlyPolicy(permissions),
  };
}
